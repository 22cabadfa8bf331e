/**
 * Which account's exchange an error came from, with several accounts: "HTTP 401" alone does not
 * say which key to look at. Kept beside the error, not in it (the error's class, code and fields
 * stay the exchange's), for whoever reports it to name the account.
 */
const accounts = new WeakMap<object, string>();

/** Note that `error` came from `account`'s exchange; the error itself is returned. */
export function tagAccount<E>(error: E, account: string): E {
  if (typeof error === 'object' && error !== null) accounts.set(error, account);
  return error;
}

/** The account noted for `error`, or null. */
export function accountOfError(error: unknown): string | null {
  return typeof error === 'object' && error !== null ? (accounts.get(error) ?? null) : null;
}
