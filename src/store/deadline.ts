/** A Redis command of the bot's own that got no answer in time. */
export class StoreTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`Redis did not answer ${what} within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

/**
 * `target` with every method that returns a promise bounded by `ms`: past it, the call rejects with
 * a StoreTimeoutError. The Redis client sets no deadline of its own: a command sent to a Redis that
 * hangs would wait for its answer until TCP gave up, minutes later. The command may
 * still land afterwards: callers treat the error as "not known to have happened" (work is retried,
 * and each of its steps is safe to repeat).
 */
export function withDeadlines<T extends object>(
  target: T,
  ms: number,
  /** Hears each call's failure, its own or the deadline's (it must not throw). */
  onError?: (error: unknown) => void,
): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(object, args);
        if (!(result instanceof Promise)) return result;
        const call = bounded(result, ms, String(property));
        if (onError) {
          call.catch((error: unknown) => {
            try {
              onError(error);
            } catch {
              // Only a listener: the caller has the error.
            }
          });
        }
        return call;
      };
    },
  });
}

function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(what, ms)), ms);
  });
  // The command's own failure after the deadline is nobody's: keep it from going unhandled.
  work.catch(() => {});
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
