/**
 * The three worlds stacker runs in, one name everywhere: `live` trades real money, `dry-run`
 * trades a paper account on real prices, `backtest` replays history. Each keeps its own journal.
 */
export const RUN_MODES = ['live', 'dry-run', 'backtest'] as const;
export type RunMode = (typeof RUN_MODES)[number];

/** The modes a daemon runs in (a backtest is a command, not a daemon). */
export const DAEMON_MODES = ['dry-run', 'live'] as const satisfies readonly RunMode[];
export type DaemonMode = (typeof DAEMON_MODES)[number];
