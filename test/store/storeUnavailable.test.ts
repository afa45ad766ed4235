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

  it('tells a certificate for another host name from one nothing vouches for: check the host name', () => {
    const reason =
      "Hostname/IP does not match certificate's altnames: Host: 127.0.0.2. is not cert's CN: 127.0.0.1";
    const message = said('rediss://127.0.0.2:6380', reason, 'ERR_TLS_CERT_ALTNAME_INVALID');
    expect(message).toBe(
      `Redis at rediss://127.0.0.2:6380 presented a TLS certificate that does not fit (${reason}). Check the host name in REDIS_URL; REDIS_TLS_REJECT_UNAUTHORIZED=false accepts any certificate`,
    );
    expect(said('rediss://h:6380', 'certificate has expired', 'CERT_HAS_EXPIRED')).toContain(
      'presented a TLS certificate that does not fit',
    );
  });

  it('tells a Redis that takes no more clients, and how many the bot opens', () => {
    expect(said('redis://h:6379', 'ERR max number of clients reached')).toBe(
      "Redis at redis://h:6379 refused the connection: it has as many clients as it takes (maxclients, or the plan's connection limit). " +
        'A process with the worker role opens 7 connections (6 without a weekly digest), one with only the web role 1 (ERR max number of clients reached)',
    );
  });
});
