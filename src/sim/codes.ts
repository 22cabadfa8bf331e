import type { CodePage, CodeRecord } from '../domain/account.ts';
import { ProblemList } from './rejection.ts';

/** Bounds of the code list (docs/exchange-api.md §5). */
export const CODE_PAGE_BOUNDS = { defaultLimit: 30, maxLimit: 100, maxOffset: 10_000 } as const;

export interface CodePageRequest {
  readonly limit?: number;
  readonly offset?: number;
}

/** The account's codes (WhiteBIT Codes), listed newest first. */
export class Codes {
  readonly #codes: CodeRecord[] = [];

  add(code: CodeRecord): void {
    this.#codes.push(code);
  }

  /**
   * One page. Refusals are validation problems (400 code 0 on the wire), every bad field at
   * once: limit 1–100, offset 0–10000, offset + limit ≤ 10000.
   */
  page(request: CodePageRequest = {}): CodePage {
    const limit = request.limit ?? CODE_PAGE_BOUNDS.defaultLimit;
    const offset = request.offset ?? 0;
    const problems = new ProblemList();
    if (!Number.isInteger(limit)) problems.add('limit', 'The limit must be an integer.');
    else if (limit < 1) problems.add('limit', 'The limit must be at least 1.');
    else if (limit > CODE_PAGE_BOUNDS.maxLimit) problems.add('limit', `The limit may not be greater than ${CODE_PAGE_BOUNDS.maxLimit}.`);
    if (!Number.isInteger(offset)) problems.add('offset', 'The offset must be an integer.');
    else if (offset < 0) problems.add('offset', 'The offset must be at least 0.');
    else if (offset > CODE_PAGE_BOUNDS.maxOffset) problems.add('offset', `The offset may not be greater than ${CODE_PAGE_BOUNDS.maxOffset}.`);
    else if (problems.empty && offset + limit > CODE_PAGE_BOUNDS.maxOffset) {
      // docs/exchange-api.md states the rule but not its message; worded like its neighbours.
      problems.add('offset', `The offset plus limit may not be greater than ${CODE_PAGE_BOUNDS.maxOffset}.`);
    }
    problems.throwIfAny('validation', 0);
    const newestFirst = this.#codes.slice().sort((a, b) => b.dateSec - a.dateSec);
    return { total: this.#codes.length, limit, offset, codes: newestFirst.slice(offset, offset + limit) };
  }
}
