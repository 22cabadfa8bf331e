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

/** A candle file larger than a series can hold (file-bytes.ts): refused whole, never read in part. */
export class CandleFileTooLargeError extends StackerError {
  readonly code = 'E_INPUT' as const;
  readonly retryable = false;
  readonly source: string;
  readonly bytes: number;
  /** What is wrong and what to do, without the file's name. */
  readonly rule: string;
  /** `atLeast`: a pipe, refused once it passed the limit, its whole size unknown. */
  constructor(source: string, bytes: number, atLeast = false) {
    const size = atLeast ? 'is over 2 GiB' : `is ${(bytes / 2 ** 30).toFixed(2)} GiB`;
    const rule = `${size}, more than a candle file can be (2 GiB): split it by period (a year or two a file), or keep only the columns time,open,high,low,close,volume`;
    super(`${source} ${rule}`);
    this.name = 'CandleFileTooLargeError';
    this.source = source;
    this.bytes = bytes;
    this.rule = rule;
  }
}
