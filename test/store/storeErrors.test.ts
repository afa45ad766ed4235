import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { StoreUnavailableError } from '../../src/store/redisProblems.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import type { Store } from '../../src/store/store.js';
import { isErrorReply, isStoreUnavailable, storeTrouble } from '../../src/store/storeErrors.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((store) => store.close()));
});

describe('Redis URLs and replies the bot explains in plain words', () => {
  it('a password the Redis client cannot decode (a lone %) stops the start with what to do, not "URI malformed"', async () => {
    const url = new URL(TEST_REDIS_URL);
    url.password = 'pass%word-42';
    const error: unknown = await openRedisStore({
      url: url.toString(),
      namespace: uniqueNamespace('uri'),
      logger,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain(`Redis at ${url.protocol}//${url.host}`);
    expect(message).toContain('Percent-encode a % in it as %25');
    expect(message).not.toContain('word-42');
  });

  it('knows Redis’s own error replies, as node-redis raises them, from other errors', async () => {
    const store = await openRedisStore({ url: TEST_REDIS_URL, namespace: uniqueNamespace('reply'), logger });
    opened.push(store);
    // A NOPERM (an ACL refusing a section of INFO, as a provider may) and an error a script returns.
    const refused: unknown = await store.redis
      ?.eval("return redis.error_reply('NOPERM this user has no permissions to run the info command')")
      .catch((caught: unknown) => caught);
    const wrongType: unknown = await store.redis?.sendCommand(['INCR']).catch((caught: unknown) => caught);
    expect(isErrorReply(refused)).toBe(true);
    expect(isErrorReply(wrongType)).toBe(true);
    expect(isErrorReply(new Error('Socket closed unexpectedly'))).toBe(false);
    expect(isErrorReply('NOPERM')).toBe(false);
  });

  it('Upstash’s "max requests limit exceeded" is waited out like a full Redis, and said in plain words', async () => {
    const store = await openRedisStore({ url: TEST_REDIS_URL, namespace: uniqueNamespace('limit'), logger });
    opened.push(store);
    // Upstash's own reply, as a real Redis sends an error reply.
    const reply = 'ERR max requests limit exceeded. Limit: 500000, Usage: 500000';
    const error: unknown = await store.redis
      ?.eval(`return redis.error_reply('${reply}')`)
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toBe(reply);
    expect(isStoreUnavailable(error)).toBe(true);
    expect(storeTrouble(error)).toContain(
      "Redis refuses commands: its plan's allowance of commands is used up",
    );
    expect(storeTrouble(error)).toContain('take a fixed plan');
    // At start, the same reply is told in the same words (the message the start stops with).
    expect(new StoreUnavailableError('rediss://:pw@example.upstash.io:6379', error).message).toContain(
      'Redis at rediss://example.upstash.io:6379 refuses commands: its plan',
    );
  });
});
