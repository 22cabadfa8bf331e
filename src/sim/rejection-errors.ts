import { ExchangeRefusedError, ExchangeValidationError } from '../domain/errors.ts';
import { SimRejection } from './rejection.ts';

/**
 * Order endpoints answer validation with 422 and business rules with 400; main-account
 * endpoints (transfer, codes, flex) the other way round (WHITEBIT.md, as the sandbox serves it).
 */
export type EndpointStyle = 'trade' | 'main-account';

/**
 * The domain error the HTTP client would raise for this refusal from the sandbox, so the engine
 * sees the same error class, status, code and field map whether the sim is behind HTTP (sandbox)
 * or in-process (paper, backtest).
 */
export function toExchangeError(rejection: SimRejection, path: string, style: EndpointStyle): ExchangeValidationError | ExchangeRefusedError {
  const validation = rejection.kind === 'validation';
  const httpStatus = style === 'main-account' ? (validation ? 400 : 422) : validation ? 422 : 400;
  const init = {
    httpStatus,
    path,
    exchangeCode: rejection.exchangeCode,
    exchangeMessage: validation ? 'Validation failed' : 'Inner validation failed',
    fieldErrors: rejection.fieldErrors(),
  };
  return validation ? new ExchangeValidationError(init) : new ExchangeRefusedError(init);
}

/** Run a sim operation, turning its refusal into the domain error. */
export function asExchange<T>(path: string, style: EndpointStyle, operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof SimRejection) throw toExchangeError(error, path, style);
    throw error;
  }
}
