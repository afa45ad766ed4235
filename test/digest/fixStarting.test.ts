import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { fixesStarting, markFixStarting } from '../../src/digest/fixNote.js';
import type { StruggleValue } from '../../src/digest/strugglesMessage.js';
import { createLogger } from '../../src/log.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import type { Store } from '../../src/store/store.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const quiet = createLogger({ level: 'error', secrets: [], sink: () => {} });
const opened: Store[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

const struggle: StruggleValue = { kind: 'search', subject: 'rate limits', count: 4, range: '16–22 Nov 2026' };
const item = { channel: 'C0DIGEST', ts: '1700000000.000100', struggle };
// Where the bot's version before this one noted a start for the item: the same key, without `start`.
const startingKey = `fix-starting:${item.channel}:${item.ts}:${createHash('sha256')
  .update(JSON.stringify(item.struggle))
  .digest('hex')
  .slice(0, 32)}`;

describe('who is starting a job for a digest’s item', () => {
  it('is told to the next person while the bot is deployed, whichever version noted the start', async () => {
    const store = await openRedisStore({
      url: TEST_REDIS_URL,
      namespace: uniqueNamespace('fix'),
      logger: quiet,
    });
    opened.push(store);
    // ada submitted the item's form to a process of the version before (still running during a deploy).
    const at = Date.now();
    await store.atomic.indexAdd(
      startingKey,
      JSON.stringify({ user: 'U0ADA', name: 'ada', at }),
      at,
      undefined,
      600_000,
    );
    // bea clicks the item in a process of this version: she is told ada is starting a job for it.
    expect(await fixesStarting(store.atomic, item)).toEqual(['ada']);
    // And a start noted by this version is told alongside it.
    await markFixStarting(store.atomic, async () => 'cy', item, 'form-2', 'U0CY');
    expect((await fixesStarting(store.atomic, item)).sort()).toEqual(['ada', 'cy']);
  });
});
