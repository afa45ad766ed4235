/**
 * Work a process runs outside the queues (a form opened after its ack, a Home tab publish): on
 * shutdown the bot waits for it to finish, up to a deadline, before it exits.
 */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  run<T>(work: () => Promise<T>): Promise<T> {
    const promise = work();
    this.running.add(promise);
    const forget = () => this.running.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves true when everything finished, false when the deadline came first. */
  async drain(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      while (this.running.size > 0) {
        const settled = Promise.allSettled([...this.running]).then(() => true as const);
        if (!(await Promise.race([settled, deadline]))) return false;
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}
