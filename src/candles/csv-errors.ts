import { StackerError } from '../domain/errors.ts';
/** The header every candle file starts with. */
export const CANDLE_CSV_HEADER = 'time,open,high,low,close,volume';

export interface CandleCsvProblem {
  /** 1-based line number in the file (the header is line 1). */
  readonly line: number;
  readonly reason: string;
}

/** A candle file that cannot be trusted; names every bad line found (up to a cap). */
export class CandleCsvError extends StackerError {
  /** A candle file is the user's input, like a flag. */
  readonly code = 'E_INPUT' as const;
  readonly retryable = false;
  readonly source: string;
  readonly problems: readonly CandleCsvProblem[];
  /** The file was not read to its end: the problems are the first ones, and there may be more. */
  readonly stoppedEarly: boolean;
  constructor(source: string, problems: readonly CandleCsvProblem[], stoppedEarly = false) {
    const more = stoppedEarly ? `; stopped after ${problems.length} problems, there may be more` : '';
    super(`${source}: ${problems.map((p) => `line ${p.line}: ${p.reason}`).join('; ')}${more}`);
    this.name = 'CandleCsvError';
    this.source = source;
    this.problems = problems;
    this.stoppedEarly = stoppedEarly;
  }
}
