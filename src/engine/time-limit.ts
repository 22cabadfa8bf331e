/**
 * Time limits on work that may never settle (a strategy's decide), watched by one timer for all
 * of them. A timer of its own per call cost a slot a timer inserted and removed and a promise
 * race: a backtest runs tens of thousands of slots whose decide answers within microseconds.
 * Here a call adds itself to a set and leaves it when its work settles; the one timer is armed
 * for the earliest deadline and holds the process open only while some work is pending, as a
 * timer per call did.
 */

interface Pending {
  readonly deadline: number;
  fail(): void;
}

const pending = new Set<Pending>();
let timer: NodeJS.Timeout | undefined;
let timerAt = Number.POSITIVE_INFINITY;

/** `work`, or a TypeError naming `what` when it has not settled within `limitMs`. */
export function withinTimeLimit<T>(work: Promise<T>, limitMs: number, what: string): Promise<T> {
  return limited(work, limitMs, what, undefined) as Promise<T>;
}

/** What withinTimeLimitUnlessStopped answers for work its caller stopped waiting for. */
export const STOPPED_WAITING: unique symbol = Symbol('stopped waiting');

/**
 * withinTimeLimit, given up when `stop` aborts while the work is pending: then STOPPED_WAITING at
 * once, the work left to settle unheard and no longer watched (its deadline holds no stopping
 * process open). Work that answers within the turn the stop came in (a decide that needs
 * nothing from outside) still gives its value.
 */
export function withinTimeLimitUnlessStopped<T>(work: Promise<T>, limitMs: number, what: string, stop: AbortSignal | undefined): Promise<T | typeof STOPPED_WAITING> {
  return limited(work, limitMs, what, stop);
}

function limited<T>(work: Promise<T>, limitMs: number, what: string, stop: AbortSignal | undefined): Promise<T | typeof STOPPED_WAITING> {
  return new Promise<T | typeof STOPPED_WAITING>((resolve, reject) => {
    let done = false;
    const giveUp = (): void => {
      if (done) return;
      done = true;
      settle(entry);
      resolve(STOPPED_WAITING);
    };
    const onStop = (): void => void setImmediate(giveUp);
    const finish = (): void => {
      done = true;
      stop?.removeEventListener('abort', onStop);
      settle(entry);
    };
    const entry: Pending = {
      deadline: performance.now() + limitMs,
      fail: () => {
        if (done) return;
        finish();
        reject(new TypeError(`${what} did not answer within ${limitMs / 1000} s`));
      },
    };
    watch(entry);
    if (stop !== undefined) {
      if (stop.aborted) onStop();
      else stop.addEventListener('abort', onStop, { once: true });
    }
    work.then(
      (value) => {
        if (done) return;
        finish();
        resolve(value);
      },
      (error: unknown) => {
        if (done) return;
        finish();
        reject(error);
      },
    );
  });
}

function watch(entry: Pending): void {
  pending.add(entry);
  if (timer !== undefined && timerAt <= entry.deadline) {
    timer.ref();
    return;
  }
  arm(entry.deadline);
}

function settle(entry: Pending): void {
  if (!pending.delete(entry)) return;
  // Nothing left to watch: the armed timer must not keep a finished program alive.
  if (pending.size === 0) timer?.unref();
}

function arm(deadline: number): void {
  if (timer !== undefined) clearTimeout(timer);
  timerAt = deadline;
  timer = setTimeout(expire, Math.max(0, deadline - performance.now()));
}

/** Fails the work past its deadline and arms the timer for the next deadline, if any is pending. */
function expire(): void {
  timer = undefined;
  timerAt = Number.POSITIVE_INFINITY;
  const now = performance.now();
  let next = Number.POSITIVE_INFINITY;
  for (const entry of pending) {
    if (entry.deadline <= now) {
      pending.delete(entry);
      entry.fail();
    } else if (entry.deadline < next) next = entry.deadline;
  }
  if (next !== Number.POSITIVE_INFINITY) arm(next);
}
