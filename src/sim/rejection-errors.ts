import { ExchangeRefusedError, ExchangeValidationError } from '../domain/errors.ts';
import { SimRejection } from './rejection.ts';

/**
 * Order and trade-account endpoints answer validation with 422 and business rules with 400;
 * main-account endpoints (transfer, codes, flex) the other way round (docs/exchange-api.md §7, as the
 * sandbox serves it: src/sandbox/responses.ts rejectionAnswer).
 */
export type EndpointStyle = 'trade' | 'main-account';

/** The refusal style of an endpoint, from its path (the exchange groups them by prefix). */
export function endpointStyleOf(path: string): EndpointStyle {
  return path.startsWith('/api/v4/main-account/') ? 'main-account' : 'trade';
}

/**
 * The domain error the HTTP client raises when the sandbox refuses with this rejection at
 * `path`, so the engine sees the same class, status, code, message and field map whether the
 * sim sits behind HTTP (sandbox) or in-process (paper, backtest):
 *
 * - status: the sandbox's per-endpoint mapping of `kind` (above);
 * - body message: "Validation failed" for validation, "Inner validation failed" for business
 *   rules; the client (src/api/error-map.ts) reads the latter as a refusal whatever the status,
 *   and the former as a validation error unless a field message is a known refusal text —
 *   which no validation-kind rejection of the sim carries (test/sim/rejection-errors.test.ts
 *   checks every one against the client's own mapping).
 */
export function toExchangeError(rejection: SimRejection, path: string, style: EndpointStyle = endpointStyleOf(path)): ExchangeValidationError | ExchangeRefusedError {
  const validation = rejection.kind === 'validation';
  const httpStatus = style === 'main-account' ? (validation ? 400 : 422) : validation ? 422 : 400;
  const init = {
    httpStatus,
    path,
    exchangeCode: rejection.exchangeCode,
    exchangeMessage: validation ? 'Validation failed' : 'Inner validation failed',
    fieldErrors: rejection.fieldErrors(),
    refusal: rejection.refusal,
  };
  return validation ? new ExchangeValidationError(init) : new ExchangeRefusedError(init);
}

/** Run a sim operation, turning its refusal into the domain error for `path`. */
export function asExchange<T>(path: string, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof SimRejection) throw toExchangeError(error, path);
    throw error;
  }
}
