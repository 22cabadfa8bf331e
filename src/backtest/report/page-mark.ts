/**
 * The mark in the head of every HTML page stacker writes (a backtest's, `report --html`'s): a
 * file already at a report's path is written over only when it carries it (reportFile), so a
 * slip that names the candle file or a strategy's .env as the report never replaces it.
 */
export const PAGE_MARK = '<meta name="generator" content="stacker">';
