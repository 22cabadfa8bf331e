import { existsSync } from 'node:fs';

/**
 * The kill switch: while it is on, nothing that moves money is sent. Checked right before each
 * send (not once per slot), so touching the file stops the very next order, within one tick.
 */
export interface KillSwitch {
  /**
   * null when off; otherwise why it is on, for the refusal message. With `account`: whether
   * anything of that account may be sent (its own switch, or the one for every account).
   */
  active(account?: string): string | null;
}

export const neverKilled: KillSwitch = { active: () => null };

export function killSwitch(options: { readonly file: string | null; readonly env: boolean }): KillSwitch {
  return {
    active() {
      if (options.env) return 'STACKER_KILL_SWITCH is set';
      // existsSync per send costs a stat call (microseconds); reading it once would miss a file touched mid-run.
      if (options.file !== null && existsSync(options.file)) return `kill-switch file ${options.file} exists`;
      return null;
    },
  };
}
