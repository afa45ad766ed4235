import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/store/redisProblems.js';

/** The start failure's words, without the logger (which would redact a password anyway). */
const said = (url: string, message: string, code?: string) =>
  new StoreUnavailableError(url, Object.assign(new Error(message), code ? { code } : {})).message;

describe('what the bot says when Redis fails it at start', () => {
  it('never repeats a reply that quotes the password, nor the URL’s credentials', () => {
    const message = said(
      'redis://:hunter2-password@127.0.0.1:6379',
      'ERR AUTH <hunter2-password> called without any password configured for the default user. Are you sure your configuration is correct?',
    );
    expect(message).toBe(
      'Redis at redis://127.0.0.1:6379 has no password set, but REDIS_URL gives one: remove the password from REDIS_URL (or set one on Redis)',
    );
  });

  it('tells a Redis still loading its data after a restart from one that refuses: start again shortly', () => {
    const reply = 'LOADING Redis is loading the dataset in memory';
    expect(said('redis://h:6379', reply)).toBe(
      `Redis at redis://h:6379 is still loading its data after a restart: start the bot again shortly (${reply})`,
    );
  });

  it('hints at the other scheme only where a TLS mismatch shows', () => {
    const useRedis = 'use redis:// if it has no TLS';
    const useRediss = 'use a rediss:// URL (two s)';
    expect(said('rediss://h:6380', 'no answer within 10 s')).toContain(useRedis);
    expect(said('rediss://h:6380', 'connect ECONNREFUSED 127.0.0.1:6380', 'ECONNREFUSED')).not.toContain(
      useRedis,
    );
    expect(said('rediss://no-such-host.invalid:6380', 'getaddrinfo ENOTFOUND', 'ENOTFOUND')).not.toContain(
      useRedis,
    );
    expect(said('redis://h:6380', 'Socket closed unexpectedly')).toContain(useRediss);
    // With a password, the AUTH the client sends first is what the TLS-only server resets.
    expect(said('redis://:pw@h:6380', 'read ECONNRESET', 'ECONNRESET')).toContain(useRediss);
    expect(said('redis://h:6380', 'connect ECONNREFUSED 127.0.0.1:6380', 'ECONNREFUSED')).not.toContain(
      useRediss,
    );
  });
});
