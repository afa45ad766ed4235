import { expect, it } from 'vitest';
import { watchReadOnly } from '../../src/store/readOnlyWatch.js';

/** Redis's reply to a write sent to a replica, as node-redis gives it. */
class ErrorReply extends Error {}
const READONLY = new ErrorReply("READONLY You can't write against a read only replica.");

it('tells once when READONLY replies last the limit, and not for a failover’s few seconds of them, nor for other errors', () => {
  let at = 0;
  let told = 0;
  const seen = watchReadOnly({ limitMs: 60_000, now: () => at, onStale: () => told++ });

  // A failover: READONLY for 10 s, then the connections reach a primary again.
  for (; at <= 10_000; at += 5_000) seen(READONLY);
  // Other trouble is not a replica's.
  at = 50_000;
  seen(new Error('Redis did not answer set within 5000 ms'));
  seen(new ErrorReply('OOM command not allowed when used memory > maxmemory'));
  // Later, a spell of its own (two minutes after the last one): counted from its start, not from the first spell's.
  for (at = 130_000; at < 190_000; at += 5_000) seen(new Error('queue add failed', { cause: READONLY }));
  expect(told).toBe(0);

  seen(READONLY);
  expect(told).toBe(1);
  at += 5_000;
  seen(READONLY);
  expect(told).toBe(1);
});

it('tells when the only writes a process makes are its announcements every half minute, and Redis refuses each as a replica', () => {
  // A process with the web role that nobody writes to: it says it is alive every 30 s (a timer that
  // fires a little late, as timers do), and the failover left it on the old primary.
  let at = 0;
  let told = 0;
  const seen = watchReadOnly({ limitMs: 60_000, now: () => at, onStale: () => told++ });
  for (; at <= 5 * 60_000; at += 30_003) seen(READONLY);
  expect(told).toBe(1);
});
