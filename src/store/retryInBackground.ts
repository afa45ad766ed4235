/**
 * Runs `attempt` in the background every `everyMs` until it is done (answers true), for work that
 * waits for Redis to answer again. It stops quietly once `wanted()` is false (done another way, or
 * the bot is stopping); `giveUp` hears why when `forMs` have passed, or at once for an error that
 * `retryOn` does not accept. `attempt` answers why it is not done yet, for that report.
 */
export function retryInBackground(
  attempt: () => Promise<true | string>,
  options: {
    everyMs: number;
    forMs: number;
    wanted: () => boolean;
    retryOn: (error: unknown) => boolean;
    giveUp: (why: string) => void;
  },
): void {
  const giveUpAt = Date.now() + options.forMs;
  const later = () => setTimeout(() => void once(), options.everyMs).unref();
  const once = async (): Promise<void> => {
    if (!options.wanted()) return;
    let notYet: string;
    try {
      const answer = await attempt();
      if (answer === true) return;
      notYet = answer;
    } catch (error) {
      if (!options.retryOn(error)) return options.giveUp(String(error));
      notYet = String(error);
    }
    if (Date.now() < giveUpAt) later();
    else options.giveUp(notYet);
  };
  later();
}
