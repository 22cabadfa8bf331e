import { type RefusalKind, StackerError } from '../domain/errors.ts';
/**
 * The sim refuses an operation the way the exchange would, without knowing HTTP: `kind` says
 * whether the request was malformed (`validation`) or well-formed but against a business rule
 * (`business`), and every problem names the request field and carries the exchange's own
 * message (verbatim from docs/exchange-api.md wherever the exchange documents one). The sandbox maps
 * `kind` to a status per endpoint group; a paper exchange maps it to a domain error.
 */
export type RejectionKind = 'validation' | 'business';

export interface RejectionProblem {
  readonly field: string;
  readonly messages: readonly string[];
}

export class SimRejection extends StackerError {
  /** The domain code the same refusal has when the exchange answers it. */
  readonly code: 'E_EXCHANGE_VALIDATION' | 'E_EXCHANGE_REFUSED';
  readonly retryable = false;
  readonly kind: RejectionKind;
  /** The exchange's numeric code for this refusal (e.g. 32 for an amount problem on an order). */
  readonly exchangeCode: number;
  readonly problems: readonly RejectionProblem[];
  /** What the refusal means to the domain, when it is one the engine decides on (src/domain/errors.ts). */
  readonly refusal: RefusalKind | null;

  constructor(kind: RejectionKind, exchangeCode: number, problems: readonly RejectionProblem[], refusal: RefusalKind | null = null) {
    const first = problems[0];
    // `message` is the exchange's text, verbatim, so it can be compared and shown as is.
    super(first?.messages[0] ?? 'rejected');
    this.name = 'SimRejection';
    this.kind = kind;
    this.code = kind === 'validation' ? 'E_EXCHANGE_VALIDATION' : 'E_EXCHANGE_REFUSED';
    this.exchangeCode = exchangeCode;
    this.problems = problems;
    this.refusal = refusal;
  }

  /** The first (usually only) field refused. */
  get field(): string {
    return this.problems[0]?.field ?? '';
  }

  /** `errors` in the wire body: field → messages. */
  fieldErrors(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const problem of this.problems) out[problem.field] = [...(out[problem.field] ?? []), ...problem.messages];
    return out;
  }

  static validation(exchangeCode: number, field: string, ...messages: string[]): SimRejection {
    return new SimRejection('validation', exchangeCode, [{ field, messages }]);
  }

  static business(exchangeCode: number, field: string, ...messages: string[]): SimRejection {
    return new SimRejection('business', exchangeCode, [{ field, messages }]);
  }

  /** A business refusal the domain has a name for. */
  static refused(refusal: RefusalKind, exchangeCode: number, field: string, ...messages: string[]): SimRejection {
    return new SimRejection('business', exchangeCode, [{ field, messages }], refusal);
  }
}

/** Collects problems so a request with several bad fields is refused once, naming them all. */
export class ProblemList {
  readonly #problems: RejectionProblem[] = [];

  add(field: string, message: string): void {
    this.#problems.push({ field, messages: [message] });
  }

  get empty(): boolean {
    return this.#problems.length === 0;
  }

  throwIfAny(kind: RejectionKind, exchangeCode: number): void {
    if (this.#problems.length > 0) throw new SimRejection(kind, exchangeCode, this.#problems);
  }
}
