import type { Engine } from '../engine/engine.ts';
import type { KillSwitch } from '../engine/kill-switch.ts';
import type { EngineLogger } from '../engine/observer.ts';
import type { SlotOutcome } from '../engine/slot-runner.ts';
import type { Journal, OperatorControls as JournalledControls } from '../store/journal.ts';
import type { ControlAction, ControlAnswer, Controls } from '../observability/control-api.ts';
import { ALREADY_JOURNALLED, shortfallItem, slotShortfall } from './slot-shortfall.ts';

/**
 * How to turn an operator's switch off: it outlives the daemon (it is in the journal), and a run
 * refused by it (`run --once`) did not say where it is turned off.
 */
function turnOff(route: string): string {
  return `; turn it off on the status page or with POST ${route} {"on": false} (STACKER_CONTROL_TOKEN) while the daemon runs`;
}

function accountReason(account: string, sinceMs: number): string {
  return `the kill switch of account ${account} was turned on from the status API at ${new Date(sinceMs).toISOString()}`;
}

export interface ControlledInstance {
  readonly instance: string;
  /** ENABLED in its file: a disabled instance can be paused and resumed, not run. */
  readonly enabled: boolean;
}

export interface OperatorControlsOptions {
  readonly journal: Journal;
  /** Every configured instance. */
  readonly instances: readonly ControlledInstance[];
  /** Every account the daemon trades on (the default one when no instance names another). */
  readonly accounts: readonly string[];
  /** null until the daemon has built its engine (controls answer 503 until then). */
  readonly engine: () => Engine | null;
  /** The daemon is stopping: no slot is started any more. */
  readonly stopping: () => boolean;
  readonly nowMs: () => number;
  readonly logger: EngineLogger;
  /** Told when a slot asked for here ended (the daemon's last-slot record and health); not when the journal already had it, since nothing ran. */
  readonly onSlot?: (instance: string, slotTimeMs: number, outcome: SlotOutcome) => Promise<void> | void;
}

/**
 * What an operator switches from the status API, and the daemon's side of each control:
 * - pause / resume: journalled first, then in effect; the engine asks `isPaused` at every slot,
 *   and a paused instance's slots are journalled as skipped ("paused") and send nothing. A slot
 *   already running when the pause arrives finishes (the kill switch is what stops a send);
 * - run: a slot now (this second), through `Engine.runSlot` like `stacker run --once`, so it is
 *   claimed, guarded and journalled like any slot; refused while paused, disabled, or while a
 *   slot of the instance runs;
 * - while the daemon stops, every control but turning a kill switch on is refused (#refusedWhileStopping);
 * - kill switch: journalled, so a restart keeps trading stopped until an operator turns it off.
 *   One stops every account; an account's own stops what its instances send, the others trade.
 *   The journal rather than the kill-switch file: the file is optional and may not be writable
 *   by the daemon (a read-only mount), and a journal write is durable and atomic when it
 *   returns. The file and STACKER_KILL_SWITCH keep working beside it.
 *
 * Reads are answered from memory, kept equal to the journal: a control changes memory only
 * after its journal write succeeded.
 */
export class OperatorControls implements Controls {
  readonly #options: OperatorControlsOptions;
  readonly #known: ReadonlyMap<string, ControlledInstance>;
  #journalled: JournalledControls;
  /** Instances whose asked-for slot is running, and the slots themselves (the daemon waits for them before closing the journal). */
  readonly #runs = new Map<string, Promise<SlotOutcome>>();

  private constructor(options: OperatorControlsOptions, journalled: JournalledControls) {
    this.#options = options;
    this.#known = new Map(options.instances.map((instance) => [instance.instance, instance]));
    this.#journalled = journalled;
  }

  /** The controls as the journal kept them (a pause from before a restart is still a pause). */
  static async load(options: OperatorControlsOptions): Promise<OperatorControls> {
    return new OperatorControls(options, await options.journal.operatorControls());
  }

  isPaused(instance: string): boolean {
    return this.#journalled.paused.has(instance);
  }

  pausedSinceMs(instance: string): number | null {
    return this.#journalled.paused.get(instance) ?? null;
  }

  get killSwitchSinceMs(): number | null {
    return this.#journalled.killSwitchSinceMs;
  }

  accountKillSwitchSinceMs(account: string): number | null {
    return this.#journalled.accountKillSwitches.get(account) ?? null;
  }

  /**
   * Each of the operator's kill switches that is on, as health and the start-up log say it: since
   * when, and what it stops (everything, or one account's sending: the others trade on).
   */
  killSwitchReasons(): string[] {
    const reasons: string[] = [];
    const all = this.killSwitch.active();
    if (all !== null) reasons.push(`the kill switch is on (${all}): nothing that moves money is sent until it is turned off`);
    for (const [account, sinceMs] of this.#journalled.accountKillSwitches) {
      reasons.push(`${accountReason(account, sinceMs)}: nothing that moves money is sent on account ${account} until it is turned off; the other accounts trade on`);
    }
    return reasons;
  }

  /** The operator's kill switches, for the engine beside the file and the environment. */
  readonly killSwitch: KillSwitch = {
    active: (account) => {
      const since = this.#journalled.killSwitchSinceMs;
      if (since !== null) return `the kill switch was turned on from the status API at ${new Date(since).toISOString()}${turnOff('/api/kill-switch')}`;
      const accountSince = account === undefined ? undefined : this.#journalled.accountKillSwitches.get(account);
      return account === undefined || accountSince === undefined ? null : `${accountReason(account, accountSince)}${turnOff(`/api/accounts/${account}/kill-switch`)}`;
    },
  };

  async act(action: ControlAction): Promise<ControlAnswer> {
    if (action.kind === 'kill-switch') {
      if (action.account !== undefined && !this.#options.accounts.includes(action.account)) {
        return { outcome: 'unknown-account', message: `no account ${JSON.stringify(action.account)}; accounts: ${this.#options.accounts.join(', ')}` };
      }
      const refused = this.#refusedWhileStopping(action);
      if (refused !== null) return refused;
      return action.account === undefined ? this.#setKillSwitch(action.on) : this.#setAccountKillSwitch(action.account, action.on);
    }
    const instance = this.#known.get(action.instance);
    if (instance === undefined) return { outcome: 'unknown-instance', message: `no instance ${JSON.stringify(action.instance)}; instances: ${[...this.#known.keys()].join(', ')}` };
    const refused = this.#refusedWhileStopping(action);
    if (refused !== null) return refused;
    if (action.kind === 'run') return this.#run(instance);
    return this.#setPaused(instance.instance, action.kind === 'pause');
  }

  /**
   * While the daemon stops, a control that changes state is refused (503), and the operator
   * asks again once it has started: no new slot starts, so a run, pause or resume would act on
   * nothing in this run, and turning a kill switch off could only let the slot still finishing
   * send. Turning a kill switch ON is the exception, on purpose: it is the one control that
   * stops a send (the engine asks it before every order, transfer and withdrawal), the slot
   * still finishing may yet send, and the next start may catch a missed slot up; an operator
   * who reaches for it must never be told to wait.
   */
  #refusedWhileStopping(action: ControlAction): ControlAnswer | null {
    if (!this.#options.stopping()) return null;
    switch (action.kind) {
      case 'kill-switch':
        return action.on ? null : { outcome: 'unavailable', message: 'stacker is stopping; a kill switch is not turned off while it stops (turning one on is): turn it off once stacker has started again' };
      case 'run':
        return { outcome: 'unavailable', message: 'stacker is stopping; no new slot is started' };
      case 'pause':
      case 'resume':
        return { outcome: 'unavailable', message: `stacker is stopping; ${action.kind} is not taken while it stops (no new slot starts anyway): ask again once it has started` };
    }
  }

  /** Resolves once no slot asked for here is running. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#runs.values()]);
  }

  async #setPaused(instance: string, paused: boolean): Promise<ControlAnswer> {
    this.#journalled = await this.#options.journal.setOperatorControl({ control: 'pause', instance, on: paused });
    const since = this.#journalled.paused.get(instance) ?? null;
    this.#options.logger.warn({ event: 'control', control: paused ? 'pause' : 'resume', instance }, paused ? `${instance} paused from the status API: its slots are skipped until resumed` : `${instance} resumed from the status API`);
    return { outcome: 'ok', body: { instance, paused, since: since === null ? null : new Date(since).toISOString() } };
  }

  async #setKillSwitch(on: boolean): Promise<ControlAnswer> {
    this.#journalled = await this.#options.journal.setOperatorControl({ control: 'kill-switch', on });
    const since = this.#journalled.killSwitchSinceMs;
    this.#options.logger.warn({ event: 'control', control: 'kill-switch', on }, on ? 'kill switch turned on from the status API: nothing that moves money is sent' : 'kill switch turned off from the status API');
    return { outcome: 'ok', body: { killSwitch: { on, since: since === null ? null : new Date(since).toISOString() } } };
  }

  async #setAccountKillSwitch(account: string, on: boolean): Promise<ControlAnswer> {
    this.#journalled = await this.#options.journal.setOperatorControl({ control: 'kill-switch', account, on });
    const since = this.accountKillSwitchSinceMs(account);
    this.#options.logger.warn(
      { event: 'control', control: 'kill-switch', account, on },
      on ? `kill switch of account ${account} turned on from the status API: nothing of its instances that moves money is sent` : `kill switch of account ${account} turned off from the status API`,
    );
    return { outcome: 'ok', body: { account, killSwitch: { on, since: since === null ? null : new Date(since).toISOString() } } };
  }

  async #run(instance: ControlledInstance): Promise<ControlAnswer> {
    const name = instance.instance;
    const engine = this.#options.engine();
    if (engine === null) return { outcome: 'unavailable', message: 'stacker is still starting; try again in a moment' };
    if (!instance.enabled) return { outcome: 'conflict', message: `${name} is disabled (ENABLED=false in its file)` };
    if (!engine.isEnabled(name)) return { outcome: 'conflict', message: `${name} was disabled in this run (its strategy failed); fix it and restart` };
    if (this.isPaused(name)) return { outcome: 'conflict', message: `${name} is paused; resume it first` };
    if (this.#runs.has(name) || engine.isRunning(name)) return { outcome: 'conflict', message: `a slot of ${name} is running; try again when it has finished` };
    // Whole seconds, as `run --once`: the slot time is part of the clientOrderId.
    const slotTimeMs = Math.floor(this.#options.nowMs() / 1000) * 1000;
    this.#options.logger.info({ event: 'control', control: 'run', instance: name, slot: new Date(slotTimeMs).toISOString() }, `${name}: running a slot now, asked for from the status API`);
    const running = (async (): Promise<SlotOutcome> => {
      const outcome = await engine.runSlot(name, slotTimeMs);
      // A second run in the same second is the slot already journalled: the last slot stays the one that ran.
      if (outcome !== 'already') await this.#options.onSlot?.(name, slotTimeMs, outcome);
      return outcome;
    })();
    this.#runs.set(name, running);
    try {
      const outcome = await running;
      // A slot whose guards refused the buy ends `done` too: the answer says what did not happen.
      const notDone = (await slotShortfall(this.#options.journal, name, slotTimeMs)).map(shortfallItem);
      const reason = await this.#whyNotDone(engine, name, slotTimeMs, outcome);
      return { outcome: 'ok', body: { instance: name, slotTime: new Date(slotTimeMs).toISOString(), outcome, ...(reason === null ? {} : { reason }), notDone } };
    } finally {
      this.#runs.delete(name);
    }
  }

  /**
   * Why a slot asked for ended other than done, for the operator who clicked Run: the journal's
   * reason for it, else trading stopped (nothing is journalled then), else that the journal
   * already had it, else that the journal could not be written. null for a slot that ran (notDone says what of it did not happen).
   */
  async #whyNotDone(engine: Engine, name: string, slotTimeMs: number, outcome: SlotOutcome): Promise<string | null> {
    if (outcome === 'done') return null;
    if (outcome === 'already') return ALREADY_JOURNALLED;
    const journalled = await this.#options.journal.getSlot({ instance: name, slotTimeMs });
    if (journalled?.reason != null) return journalled.reason;
    if (engine.fatal !== null) return `trading stopped: ${engine.fatal.message}`;
    if (outcome === 'disabled') return `${name} is disabled: its strategy failed (see the log)`;
    // Nothing journalled because nothing could be: the journal's own failure is the reason.
    const failure = this.#options.journal.writeFailure();
    return failure === null ? null : `the journal cannot be written (${failure.message}): nothing was sent`;
  }
}
