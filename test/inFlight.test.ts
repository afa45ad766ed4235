import { expect, it } from 'vitest';
import { InFlight } from '../src/inFlight.js';

it('on shutdown, waits for work begun while it was already waiting, not only for what ran when it started', async () => {
  const inFlight = new InFlight();
  let finishLater: () => void = () => {};
  let laterDone = false;
  // Work that, as it ends, begins more (a form's answer, then its after-ack work).
  void inFlight.run(async () => {
    await Promise.resolve();
    void inFlight.run(
      () =>
        new Promise<void>((resolve) => {
          finishLater = () => {
            laterDone = true;
            resolve();
          };
        }),
    );
  });

  // What had finished when the drain said all had.
  const drained = inFlight.drain(5_000).then((finished) => ({ finished, laterDone }));
  await expect.poll(() => inFlight.size).toBe(1);
  finishLater();

  expect(await drained).toEqual({ finished: true, laterDone: true });
  expect(inFlight.size).toBe(0);
});
