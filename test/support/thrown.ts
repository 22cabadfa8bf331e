/**
 * Run `fn`, expect it to throw an instance of `type`, and return that error for closer checks.
 * Anything else thrown is rethrown as is; throwing nothing fails with the expected class named.
 */
export function thrownBy<E extends Error>(type: abstract new (...args: never[]) => E, fn: () => unknown): E {
  try {
    fn();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}, nothing was thrown`);
}


/** Run a promise that must fail, and return its error. */
export async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure, got success');
}
