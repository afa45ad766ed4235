import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { StoreUnavailableError } from '../../src/store/redisProblems.js';
import { openStore, type Store } from '../../src/store/store.js';
import { record, startFollowedJob } from '../jobs/followSupport.js';
import { startBot } from '../support/botHarness.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { uniqueNamespace } from '../support/redis.js';

const REQUIRED = {
  SLACK_BOT_TOKEN: 'xoxb-1111-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_admin_secret_key_value',
  MINTLIFY_PROJECT_ID: 'proj_1',
};

/** Heroku Redis and its peers: TLS only, with a self-signed certificate. */
describe('Redis over TLS with a certificate nothing vouches for', () => {
  let redis: PrivateRedis;
  let certificate: string;
  const opened: Store[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis({ tls: true });
    certificate = redis.certificateFile ?? '';
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await redis?.close();
  });

  /** Opens the store as the bot does, from its environment; returns it and what it logged. */
  const open = async (env: Record<string, string>) => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], sink: (line) => lines.push(line) });
    const config = loadConfig({ ...REQUIRED, STORE_NAMESPACE: uniqueNamespace('tls'), ...env });
    const store = await openStore(config.store, logger, { retentionMs: config.jobRetentionMs });
    opened.push(store);
    return { store, lines };
  };
  const roundTrip = async (store: Store) => {
    await store.kv.set('thread:C1:1.2', 'job-1');
    return store.kv.get('thread:C1:1.2');
  };

  it('stops at start without a setting, with a message that names both settings and no password', async () => {
    const password = 'tls-redis-password-7';
    const url = redis.url.replace('rediss://', `rediss://:${password}@`);
    const error: unknown = await open({ REDIS_URL: url }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    const message = (error as Error).message;
    expect(message).toContain(
      `Redis at ${redis.url} presented a TLS certificate that this machine does not trust`,
    );
    expect(message).toContain('REDIS_TLS_CA');
    expect(message).toContain('REDIS_TLS_REJECT_UNAUTHORIZED=false');
    expect(message).not.toContain(password);
  });

  it('does not say the certificate is unchecked when it is checked (rediss:// alone)', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', secrets: [], sink: (line) => lines.push(line) });
    const config = loadConfig({ ...REQUIRED, REDIS_URL: redis.url });
    await expect(openStore(config.store, logger, { retentionMs: config.jobRetentionMs })).rejects.toThrow(
      StoreUnavailableError,
    );
    expect(lines.filter((line) => line.includes('not checked'))).toEqual([]);
  });

  it('says to use rediss:// when REDIS_URL asks a TLS-only Redis for a plain connection', async () => {
    const plain = redis.url.replace('rediss://', 'redis://');
    const error: unknown = await open({ REDIS_URL: plain }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain(`Redis at ${plain} did not answer`);
    expect((error as Error).message).toContain('use a rediss:// URL (two s)');
  });

  it('works with REDIS_TLS_REJECT_UNAUTHORIZED=false, and warns once that the certificate is not checked', async () => {
    const { store, lines } = await open({ REDIS_URL: redis.url, REDIS_TLS_REJECT_UNAUTHORIZED: 'false' });
    expect(await roundTrip(store)).toBe('job-1');
    const warnings = lines.filter((line) => line.includes('certificate is not checked'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('WARN');
  });

  it('works with REDIS_TLS_CA as the path of a PEM file, and as PEM text (also with \\n for newlines)', async () => {
    const pem = readFileSync(certificate, 'utf8');
    for (const ca of [certificate, pem, pem.replace(/\n/g, '\\n')]) {
      const { store, lines } = await open({ REDIS_URL: redis.url, REDIS_TLS_CA: ca });
      expect(await roundTrip(store)).toBe('job-1');
      expect(lines.filter((line) => line.includes('certificate is not checked'))).toHaveLength(0);
    }
  });

  it('refuses a REDIS_TLS_CA that holds no certificate, before connecting', () => {
    for (const ca of ['/no/such/file.pem', '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----']) {
      expect(() => loadConfig({ ...REQUIRED, REDIS_URL: redis.url, REDIS_TLS_CA: ca })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ ...REQUIRED, REDIS_TLS_REJECT_UNAUTHORIZED: 'no' })).toThrow(
      /REDIS_TLS_REJECT_UNAUTHORIZED must be true or false/,
    );
  });

  it('runs the whole bot on it: queues and store, a job started and followed', async () => {
    const h = await startBot({ env: { REDIS_URL: redis.url, REDIS_TLS_CA: certificate } });
    try {
      const job = await startFollowedJob(h, 'Document the TLS settings');
      expect((await record(h, job.jobId))?.status).toBe('active');
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});
