import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig, secretsOf } from '../src/config.js';
import { configurationWarnings } from '../src/configWarnings.js';
import { readConfiguration } from '../src/environment.js';
import { createLogger, redact } from '../src/log.js';
import { previousScheduledRun } from '../src/queue/cron.js';

const valid = {
  SLACK_BOT_TOKEN: 'xoxb-1111-secret-bot-token',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  MINTLIFY_API_KEY: 'mint_admin_secret_key_value',
  MINTLIFY_PROJECT_ID: 'proj_1',
};

function problemsOf(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('reads a minimal environment with documented defaults', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      slack: { botToken: valid.SLACK_BOT_TOKEN, socketMode: false, apiUrl: undefined },
      mintlify: { apiKey: valid.MINTLIFY_API_KEY, projectId: 'proj_1', apiUrl: 'https://api.mintlify.com' },
      store: { redisUrl: undefined, namespace: 'docs-agent' },
      port: 3000,
      digest: { channel: undefined, cron: '0 9 * * 1', timezone: 'UTC', top: 10 },
      logLevel: 'info',
    });
    expect(config.access).toEqual({ userIds: undefined, channelIds: undefined });
  });

  it('starts with the defaults README.md’s table of variables gives', () => {
    const config = loadConfig(valid);
    const used: Record<string, string> = {
      MINTLIFY_API_URL: config.mintlify.apiUrl,
      REDIS_TLS_REJECT_UNAUTHORIZED: String(config.store.tls.rejectUnauthorized),
      STORE_NAMESPACE: config.store.namespace,
      PREVIEWS: config.previews ? 'on' : 'off',
      JOB_RETENTION_DAYS: String(config.jobRetentionMs / (24 * 3_600_000)),
      SERVICES: (['web', 'worker'] as const).filter((role) => config.services[role]).join(','),
      QUEUE_LOCK_MS: String(config.queueLockMs),
      PORT: String(config.port),
      LOG_LEVEL: config.logLevel,
      POLL_INTERVAL_MS: String(config.poll.intervalMs),
      POLL_MAX_INTERVAL_MS: String(config.poll.maxIntervalMs),
      POLL_CONCURRENCY: String(config.poll.concurrency),
      POLL_REQUESTS_PER_MINUTE: String(config.poll.requestsPerMinute),
      POLL_SLOW_INTERVAL_MS: String(config.poll.slowIntervalMs),
      JOB_SLOW_AFTER_MS: String(config.poll.slowAfterMs),
      DIGEST_CRON: String(config.digest.cron),
      DIGEST_TIMEZONE: config.digest.timezone,
      DIGEST_TOP: String(config.digest.top),
      DIGEST_STRUGGLES: String(config.digest.struggles),
      DIGEST_MAX_PAGES: String(config.digest.maxPages),
      DIGEST_GIVE_UP_MS: String(config.digest.giveUpMs),
    };
    // Each row `| \`NAME\` | required | \`default\` | …`, whose default is a value (not "none", "everyone").
    const documented = Object.fromEntries(
      readFileSync(new URL('../README.md', import.meta.url), 'utf8')
        .split('\n')
        .map((line) => /^\| `([A-Z_]+)` \| [^|]* \| `([^`]+)`/.exec(line))
        .filter((match) => match !== null)
        .map((match) => [match[1], match[2]] as const)
        .filter(([name]) => name !== 'ENV_FILE'), // read before the configuration, by environment.ts
    );
    expect(documented).toEqual(used);
    // The words among them are read in any case.
    expect(loadConfig({ ...valid, LOG_LEVEL: ' DEBUG ', PREVIEWS: 'OFF' })).toMatchObject({
      logLevel: 'debug',
      previews: false,
    });
  });

  it('turns Socket Mode on with an app token, and then needs no signing secret', () => {
    const config = loadConfig({ ...valid, SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: 'xapp-1-abc' });
    expect(config.slack.socketMode).toBe(true);
  });

  it('normalizes the Slack API URL for the Web API client and parses allowlists', () => {
    const config = loadConfig({
      ...valid,
      SLACK_API_URL: 'http://127.0.0.1:9000/api',
      ALLOWED_USER_IDS: 'U0ADA, W0BOB  U0CY',
      ALLOWED_CHANNEL_IDS: 'C0DOCS,G0TEAM',
    });
    expect(config.slack.apiUrl).toBe('http://127.0.0.1:9000/api/');
    expect([...(config.access.userIds ?? [])]).toEqual(['U0ADA', 'W0BOB', 'U0CY']);
    expect([...(config.access.channelIds ?? [])]).toEqual(['C0DOCS', 'G0TEAM']);
  });

  it('reports every problem at once, naming each variable', () => {
    const error = problemsOf({
      SLACK_BOT_TOKEN: 'xoxp-user-token-secret',
      PORT: 'eighty',
      REDIS_URL: 'http://localhost',
      DIGEST_CRON: 'every monday',
      DIGEST_TIMEZONE: 'Mars/Olympus',
      LOG_LEVEL: 'loud',
      POLL_INTERVAL_MS: '10',
    });
    expect(error.problems.map((problem) => problem.variable).sort()).toEqual(
      [
        'DIGEST_CRON',
        'DIGEST_TIMEZONE',
        'LOG_LEVEL',
        'MINTLIFY_API_KEY',
        'MINTLIFY_PROJECT_ID',
        'POLL_INTERVAL_MS',
        'PORT',
        'REDIS_URL',
        'SLACK_BOT_TOKEN',
        'SLACK_SIGNING_SECRET',
      ].sort(),
    );
    expect(error.message).toContain('10 configuration problems');
    expect(error.message).toContain('npm run sandbox');
    expect(error.message).toContain('SLACK_BOT_TOKEN must be a bot token starting with xoxb-');
    // Each with what it must be, its bounds told as they are.
    expect(error.message).toContain('  - PORT must be a whole number');
    expect(error.message).toContain('  - POLL_INTERVAL_MS must be at least 100');
    expect(error.message).toContain('  - LOG_LEVEL must be one of debug, info, warn, error');
    expect(error.message).toContain('  - REDIS_URL must be a redis:// or rediss:// URL');
    expect(problemsOf({ ...valid, DIGEST_TOP: '41' }).message).toMatch(
      /^docs-agent cannot start: 1 configuration problem\n {2}- DIGEST_TOP must be at most 40\n/,
    );
    expect(error.message).not.toContain('xoxp-user-token-secret');
  });

  it('reports the problems that tie variables together with every other, once each', () => {
    const error = problemsOf({
      ...valid,
      PORT: 'abc',
      SERVICES: 'web',
      REDIS_TLS_CA: '/no/such/ca.pem',
      POLL_INTERVAL_MS: '10000',
      POLL_MAX_INTERVAL_MS: '5000',
    });
    expect(error.problems.map((problem) => problem.variable).sort()).toEqual(
      // REDIS_TLS_CA twice: a file that cannot be read, and no REDIS_URL to use it with.
      ['PORT', 'POLL_MAX_INTERVAL_MS', 'REDIS_TLS_CA', 'REDIS_TLS_CA', 'SERVICES'].sort(),
    );
    expect(problemsOf({ ...valid, REDIS_URL: 'localhost:6379' }).problems).toEqual([
      { variable: 'REDIS_URL', problem: 'must be a redis:// or rediss:// URL' },
    ]);
  });

  it('takes POLL_MAX_INTERVAL_MS equal to POLL_INTERVAL_MS (“at least”): jobs are then checked at one steady pace', () => {
    const config = loadConfig({ ...valid, POLL_INTERVAL_MS: '5000', POLL_MAX_INTERVAL_MS: '5000' });
    expect(config.poll).toMatchObject({ intervalMs: 5000, maxIntervalMs: 5000 });
  });

  it('needs no signing secret or app token for what takes no request from Slack (npm run digest)', () => {
    const { SLACK_SIGNING_SECRET: _unneeded, ...withoutSecret } = valid;
    expect(problemsOf(withoutSecret).problems.map((problem) => problem.variable)).toEqual([
      'SLACK_SIGNING_SECRET',
    ]);
    expect(loadConfig(withoutSecret, { receivesRequests: false }).slack.signingSecret).toBeUndefined();
  });

  it('needs no signing secret or app token for a worker-only process, which takes no request from Slack', () => {
    const { SLACK_SIGNING_SECRET: _unneeded, ...withoutSecret } = valid;
    const redis = { ...withoutSecret, REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig({ ...redis, SERVICES: 'worker' }).services).toEqual({ web: false, worker: true });
    for (const services of ['web', 'web,worker']) {
      expect(problemsOf({ ...redis, SERVICES: services }).problems).toEqual([
        { variable: 'SLACK_SIGNING_SECRET', problem: expect.stringContaining('is missing') },
      ]);
    }
    // A worker still needs the bot token.
    expect(problemsOf({ ...redis, SERVICES: 'worker', SLACK_BOT_TOKEN: undefined }).problems).toEqual([
      { variable: 'SLACK_BOT_TOKEN', problem: expect.stringContaining('is missing') },
    ]);
  });

  it.each([
    ['mint_dsc_assistant_key_secret', 'an assistant key (mint_dsc_)'],
    ['mint_us_index_key_secret', 'an index key (mint_us_)'],
    ['sk_live_something_secret', 'not a Mintlify API key'],
  ])('refuses %s as the Mintlify key, saying which key is needed, without printing it', (key, kind) => {
    const error = problemsOf({ ...valid, MINTLIFY_API_KEY: key });
    expect(error.problems).toEqual([
      {
        variable: 'MINTLIFY_API_KEY',
        problem: expect.stringContaining(`is ${kind}; the agent API needs an admin key`),
      },
    ]);
    expect(error.message).toContain('https://app.mintlify.com/settings/organization/api-keys');
    expect(error.message).not.toContain(key);
  });

  it('refuses a Mintlify key with a character no HTTP header can carry (a zero-width space pasted with it), without printing it', () => {
    // JavaScript's trim() keeps U+200B; undici then refuses every request's Authorization header
    // ("invalid authorization header"), and the bot starts only to fail every call to Mintlify.
    const key = 'mint_admin_secret_key_value\u200b';
    const error = problemsOf({ ...valid, MINTLIFY_API_KEY: key });
    expect(error.problems).toEqual([{ variable: 'MINTLIFY_API_KEY', problem: expect.any(String) }]);
    expect(error.message).toContain(
      'MINTLIFY_API_KEY has a character no key or token holds (U+200B, at its end), likely a space or an invisible character pasted with it: copy it again and paste it alone',
    );
    expect(error.message).not.toContain('mint_admin_secret_key_value');
  });

  it.each([
    ['SLACK_BOT_TOKEN', '\u200bxoxb-1111-secret-bot-token', 'U+200B, at its start'],
    ['SLACK_SIGNING_SECRET', 'signing-secret\u00a0value', 'U+00A0, after its first 14 characters'],
    ['SLACK_APP_TOKEN', 'xapp-1-secret-app-token\u2060', 'U+2060, at its end'],
  ])('refuses a %s with a stray character, told once, without printing it', (variable, value, where) => {
    const error = problemsOf({ ...valid, [variable]: value });
    expect(error.problems).toEqual([
      { variable, problem: expect.stringContaining(`a character no key or token holds (${where})`) },
    ]);
    expect(error.message).not.toContain('secret');
  });

  it('reads a REDIS_URL pasted with a space before or after it, as it reads the other values', () => {
    for (const written of [
      ' redis://:pw@redis.example.com:6379',
      'rediss://redis.example.com:6379/1 \t',
      '\tredis://127.0.0.1:6379 ',
    ]) {
      const config = loadConfig({ ...valid, REDIS_URL: written });
      expect(config.store.redisUrl).toBe(written.trim());
    }
    expect(
      secretsOf(loadConfig({ ...valid, REDIS_URL: ' redis://:s3cr3t@redis.example.com:6379 ' })),
    ).toContain('s3cr3t');
  });

  it('refuses a REDIS_URL whose password was not percent-encoded, without printing it', () => {
    const error = problemsOf({ ...valid, REDIS_URL: 'redis://:s3cr3t#pw/x@redis.example.com:6379' });
    expect(error.problems).toEqual([
      { variable: 'REDIS_URL', problem: expect.stringContaining('percent-encode') },
    ]);
    expect(error.message).not.toContain('s3cr3t');
    expect(
      loadConfig({ ...valid, REDIS_URL: 'redis://:s3cr3t%23pw@redis.example.com:6379' }).store.redisUrl,
    ).toBe('redis://:s3cr3t%23pw@redis.example.com:6379');
  });

  it('refuses a REDIS_URL whose unencoded password would be read in part as the host, without printing any of it', () => {
    // Read as the Redis client reads it, the first one's host is "ss", a piece of the password.
    expect(new URL('redis://:p@ss#w0rd/Secret@127.0.0.1:6390').hostname).toBe('ss');
    for (const url of [
      'redis://:p@ss#w0rd/Secret@127.0.0.1:6390',
      'rediss://:p@ss?w0rd@redis.example.com:6379',
      'redis://admin:p@ss/w0rd@redis.example.com:6379/0',
    ]) {
      const error = problemsOf({ ...valid, REDIS_URL: url });
      expect(error.problems).toEqual([
        {
          variable: 'REDIS_URL',
          problem: expect.stringContaining('percent-encode # / ? @ : in it as %23 %2F %3F %40 %3A'),
        },
      ]);
      for (const piece of ['p@ss', 'w0rd', 'Secret', 'admin', '6390', url]) {
        expect(error.message).not.toContain(piece);
      }
    }
    const encoded = 'redis://:p%40ss%23w0rd%2FSecret@127.0.0.1:6390';
    expect(loadConfig({ ...valid, REDIS_URL: encoded }).store.redisUrl).toBe(encoded);
    expect(new URL(encoded).hostname).toBe('127.0.0.1');
  });

  it('refuses a REDIS_URL whose password holds a % that is not percent-encoded, saying to write %25', () => {
    for (const url of [
      'redis://:se%cret@redis.example.com:6379',
      'rediss://us%er:pw@redis.example.com:6379',
    ]) {
      const error = problemsOf({ ...valid, REDIS_URL: url });
      expect(error.problems).toEqual([
        { variable: 'REDIS_URL', problem: expect.stringContaining('write % as %25') },
      ]);
      expect(error.message).not.toContain('cret');
    }
    expect(
      loadConfig({ ...valid, REDIS_URL: 'redis://:se%25cret@redis.example.com:6379' }).store.redisUrl,
    ).toBe('redis://:se%25cret@redis.example.com:6379');
  });

  it('refuses TLS settings without REDIS_URL, where nothing would use them', () => {
    expect(problemsOf({ ...valid, REDIS_TLS_REJECT_UNAUTHORIZED: 'false' }).problems).toEqual([
      {
        variable: 'REDIS_TLS_REJECT_UNAUTHORIZED',
        problem: expect.stringContaining('is set, but REDIS_URL is not, so there is no Redis to use it with'),
      },
    ]);
  });

  it('refuses TLS settings with a plain redis:// URL, which uses no TLS', () => {
    const error = problemsOf({
      ...valid,
      REDIS_URL: 'redis://redis.example.com:6379',
      REDIS_TLS_REJECT_UNAUTHORIZED: 'false',
      REDIS_TLS_CA: '-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----',
    });
    expect(error.problems).toEqual(
      ['REDIS_TLS_CA', 'REDIS_TLS_REJECT_UNAUTHORIZED'].map((variable) => ({
        variable,
        problem: expect.stringContaining(
          'REDIS_URL is a plain redis:// URL, which uses no TLS: use a rediss:// URL',
        ),
      })),
    );
    // Read as the setting itself is read: in any case.
    expect(
      problemsOf({
        ...valid,
        REDIS_URL: 'redis://redis.example.com:6379',
        REDIS_TLS_REJECT_UNAUTHORIZED: ' FALSE ',
      }).problems.map((problem) => problem.variable),
    ).toEqual(['REDIS_TLS_REJECT_UNAUTHORIZED']);
    const tls = loadConfig({
      ...valid,
      REDIS_URL: 'rediss://redis.example.com:6379',
      REDIS_TLS_REJECT_UNAUTHORIZED: 'false',
    });
    expect(tls.store.tls.rejectUnauthorized).toBe(false);
    expect(
      loadConfig({ ...valid, REDIS_URL: 'redis://redis.example.com:6379', REDIS_TLS_CA: ' ' }).store.tls.ca,
    ).toBe(undefined);
    // The default said aloud asks TLS for nothing: an existing setting keeps starting.
    expect(
      loadConfig({
        ...valid,
        REDIS_URL: 'redis://redis.example.com:6379',
        REDIS_TLS_REJECT_UNAUTHORIZED: 'true',
      }).store.tls.rejectUnauthorized,
    ).toBe(true);
  });

  it('takes the APIs’ URLs over https only, but for this machine: they carry the token and the key', () => {
    expect(
      problemsOf({
        ...valid,
        SLACK_API_URL: 'http://slack-proxy.internal/api',
        MINTLIFY_API_URL: 'http://10.0.0.5',
      }).problems,
    ).toEqual([
      { variable: 'SLACK_API_URL', problem: expect.stringContaining('must be an https URL') },
      { variable: 'MINTLIFY_API_URL', problem: expect.stringContaining('must be an https URL') },
    ]);
    // A URL that does not parse is one problem, told as such; a host that only starts like loopback is not.
    expect(problemsOf({ ...valid, MINTLIFY_API_URL: 'api.mintlify.com' }).problems).toEqual([
      { variable: 'MINTLIFY_API_URL', problem: 'must be an http(s) URL' },
    ]);
    expect(problemsOf({ ...valid, SLACK_API_URL: 'http://127.evil.example/api/' }).problems).toEqual([
      { variable: 'SLACK_API_URL', problem: expect.stringContaining('must be an https URL') },
    ]);
    const local = loadConfig({
      ...valid,
      SLACK_API_URL: 'http://localhost:3001/api/',
      MINTLIFY_API_URL: 'http://127.0.0.1:4010',
    });
    expect(local.slack.apiUrl).toBe('http://localhost:3001/api/');
    expect(local.mintlify.apiUrl).toBe('http://127.0.0.1:4010');
    // A proxy's own path is kept before each request's; an API version there would be doubled (/v2/v2/…).
    for (const versioned of ['https://api.mintlify.com/v2', 'https://api.mintlify.com/v1/']) {
      expect(problemsOf({ ...valid, MINTLIFY_API_URL: versioned }).problems).toEqual([
        {
          variable: 'MINTLIFY_API_URL',
          problem: expect.stringContaining('must not end with an API version'),
        },
      ]);
    }
    expect(
      loadConfig({ ...valid, MINTLIFY_API_URL: 'https://proxy.example/mintlify/' }).mintlify.apiUrl,
    ).toBe('https://proxy.example/mintlify');
  });

  it('reads a ? in DIGEST_CRON as *, as BullMQ does: Mondays only, not also today’s date', () => {
    const cron = loadConfig({ ...valid, DIGEST_CRON: '0 9 ? * 1' }).digest.cron as string;
    expect(cron).toBe('0 9 * * 1');
    // A Tuesday: the last run was the day before, not the same morning.
    expect(previousScheduledRun(cron, 'UTC', new Date('2026-11-24T10:00:00Z'))).toEqual(
      new Date('2026-11-23T09:00:00Z'),
    );
  });

  it('turns the digest schedule off with DIGEST_CRON=off, and names a cron it cannot read', () => {
    expect(loadConfig({ ...valid, DIGEST_CRON: ' OFF ' }).digest.cron).toBeUndefined();
    expect(problemsOf({ ...valid, DIGEST_CRON: 'never' }).problems).toEqual([
      { variable: 'DIGEST_CRON', problem: expect.stringContaining('(off: no schedule)') },
    ]);
  });

  it('names a DIGEST_CRON that never comes round, and reads 5L and 5#L alike: the last Friday of the month', () => {
    expect(problemsOf({ ...valid, DIGEST_CRON: '0 9 30 2 *' }).problems).toEqual([
      { variable: 'DIGEST_CRON', problem: expect.stringContaining('never comes round') },
    ]);
    for (const lastFriday of ['0 9 * * 5L', '0 9 * * 5#L']) {
      const cron = loadConfig({ ...valid, DIGEST_CRON: lastFriday }).digest.cron as string;
      expect(previousScheduledRun(cron, 'UTC', new Date('2026-11-24T10:00:00Z'))).toEqual(
        new Date('2026-10-30T09:00:00Z'),
      );
    }
  });

  it('takes DIGEST_CHANNEL as a channel ID only, not a name', () => {
    expect(loadConfig({ ...valid, DIGEST_CHANNEL: 'C0123ABCD' }).digest.channel).toBe('C0123ABCD');
    // A private channel's ID may start with G.
    expect(loadConfig({ ...valid, DIGEST_CHANNEL: 'G0123ABCD' }).digest.channel).toBe('G0123ABCD');
    expect(problemsOf({ ...valid, DIGEST_CHANNEL: '#docs' }).problems).toEqual([
      {
        variable: 'DIGEST_CHANNEL',
        problem: expect.stringContaining('must be a channel ID (C…), not its name'),
      },
    ]);
  });

  it('refuses an allowlist that names no one (only commas, as a template with its values unset writes it), which would refuse everyone unsaid', () => {
    // `ALLOWED_USER_IDS=${ADMINS},${EDITORS}` with both unset: read as a list of nobody, every door
    // would answer every person that the bot is not for them, and the start would say nothing.
    const error = problemsOf({ ...valid, ALLOWED_USER_IDS: ',', ALLOWED_CHANNEL_IDS: ' , ,' });
    expect(error.problems.map((problem) => problem.variable)).toEqual([
      'ALLOWED_USER_IDS',
      'ALLOWED_CHANNEL_IDS',
    ]);
  });

  it('refuses allowlist entries that are not Slack IDs, naming each and where to copy an ID', () => {
    const error = problemsOf({
      ...valid,
      ALLOWED_USER_IDS: '@ada, <@U0BOB>, u0cy, U0DAN',
      ALLOWED_CHANNEL_IDS: '#docs C0DOCS general',
    });
    expect(error.problems).toEqual([
      {
        variable: 'ALLOWED_USER_IDS',
        problem:
          'lists "@ada", "<@U0BOB>" (write U0BOB), "u0cy" (write U0CY): each entry must be a user ID (U… or W…, in capitals); copy it from the member’s profile > ⋯ (More) > Copy member ID',
      },
      {
        variable: 'ALLOWED_CHANNEL_IDS',
        problem: expect.stringContaining(
          'lists "#docs", "general": each entry must be a channel ID (C… or G…, in capitals), not its name; copy it from the bottom of the channel’s details',
        ),
      },
    ]);
    // A long entry may be a token pasted in the wrong place: it is not repeated.
    const pasted = problemsOf({ ...valid, ALLOWED_USER_IDS: valid.SLACK_BOT_TOKEN + valid.SLACK_BOT_TOKEN });
    expect(pasted.message).toContain('lists an entry of 52 characters');
    expect(pasted.message).not.toContain('secret-bot-token');
    // A DM's ID is harmless (DMs are never restricted), and taken.
    expect([...(loadConfig({ ...valid, ALLOWED_CHANNEL_IDS: 'D0DM' }).access.channelIds ?? [])]).toEqual([
      'D0DM',
    ]);
  });

  it('says a value kept in its quotes (Docker’s --env-file) is in quotes, and that alone, never quoting it', () => {
    const error = problemsOf({
      ...valid,
      SLACK_BOT_TOKEN: `"${valid.SLACK_BOT_TOKEN}"`,
      SLACK_SIGNING_SECRET: `'${valid.SLACK_SIGNING_SECRET}'`,
      DIGEST_CRON: '"0 9 * * 1"',
    });
    expect(error.problems).toEqual(
      ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'DIGEST_CRON'].map((variable) => ({
        variable,
        problem: expect.stringContaining('is wrapped in quotes'),
      })),
    );
    expect(error.message).not.toContain(valid.SLACK_BOT_TOKEN);
    expect(error.message).not.toContain(valid.SLACK_SIGNING_SECRET);
    // A quote inside a value is no wrapping.
    expect(() =>
      loadConfig({ ...valid, DIGEST_TIMEZONE: 'UTC', STORE_NAMESPACE: `ada's-docs` }),
    ).not.toThrow();
  });

  it('refuses the example values of .env.example, naming each', () => {
    const example = Object.fromEntries(
      readFileSync(new URL('../.env.example', import.meta.url), 'utf8')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => line.split('=', 2) as [string, string]),
    );
    const error = problemsOf(example);
    expect(error.problems.map((problem) => problem.variable).sort()).toEqual(
      ['MINTLIFY_API_KEY', 'MINTLIFY_PROJECT_ID', 'SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET'].sort(),
    );
    expect(error.message).toContain("SLACK_SIGNING_SECRET is still .env.example's example value");
  });

  it('takes .env.example’s example signing secret where it is unused: Socket Mode, a worker, npm run digest', () => {
    const own = { ...valid, SLACK_SIGNING_SECRET: 'your-signing-secret' };
    expect(() => loadConfig({ ...own, SLACK_APP_TOKEN: 'xapp-1-real-app-token' })).not.toThrow();
    expect(() =>
      loadConfig({ ...own, SERVICES: 'worker', REDIS_URL: 'redis://127.0.0.1:6379' }),
    ).not.toThrow();
    expect(() => loadConfig(own, { receivesRequests: false })).not.toThrow();
  });

  it('runs both roles by default, and one alone only with Redis', () => {
    expect(loadConfig(valid).services).toEqual({ web: true, worker: true });
    const redis = { ...valid, REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig({ ...redis, SERVICES: ' Worker ' }).services).toEqual({ web: false, worker: true });
    expect(loadConfig({ ...redis, SERVICES: 'web' }).services).toEqual({ web: true, worker: false });
    for (const alone of ['web', 'web,web', 'worker']) {
      expect(problemsOf({ ...valid, SERVICES: alone }).message).toContain('SERVICES needs REDIS_URL');
    }
    expect(problemsOf({ ...redis, SERVICES: 'web,cron' }).message).toContain(
      'SERVICES lists web and worker only',
    );
  });

  it('lists the values that must never be printed', () => {
    const config = loadConfig({ ...valid, SLACK_APP_TOKEN: 'xapp-1-app-token' });
    expect(secretsOf(config).sort()).toEqual(
      [valid.SLACK_BOT_TOKEN, valid.SLACK_SIGNING_SECRET, valid.MINTLIFY_API_KEY, 'xapp-1-app-token'].sort(),
    );
  });
});

describe('warnings at start', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('names a variable the bot does not read that looks like its own, and the one it likely meant, never its value', () => {
    const env = {
      ...valid,
      ALLOWED_USERS: 'U0ADA',
      DIGEST_CHANNEL_ID: 'C0DIGEST',
      POLL_INTERVAL: '1000',
      MINTLIFY_TOKEN: 'mint_secret_value_of_a_typo',
      SLACK_TOKEN: 'xoxb-9999-typo-token',
      PREVIEW: 'off',
      // A slip away from one of ours, whatever its start.
      SERVICE: 'worker',
      REDIS_URI: 'redis://h:1',
      REDIS_TLS_REJECT_UNAUTHORISED: 'false',
      // Blank, another tool's, Slack's tooling's, or not in the bot's prefixes: nothing said.
      DIGEST_TOPP: ' ',
      SLACK_CLIENT_SECRET: 'oauth-app-secret',
      SLACK_CLI_XOXB: 'xoxb-from-slack-run',
      REDIS_TLS_URL: 'rediss://h:1',
      HOME: '/root',
      JOB_NAME: 'build-42', // a CI's
      PREVIEW_URL: 'https://preview.example.com', // a platform's
      // Near ours, but platforms' own (Cloud Run's K_SERVICE, Heroku's REDIS_TLS_URL above).
      K_SERVICE: 'docs-agent',
      PATH: '/usr/bin',
      WEB_CONCURRENCY: '1',
      NODE_ENV: 'production',
      DYNO: 'web.1',
    };
    const warnings = configurationWarnings(env, loadConfig(env));
    expect(warnings).toEqual([
      'ALLOWED_USERS is set, but docs-agent reads no such variable, so it is ignored: did you mean ALLOWED_USER_IDS?',
      'DIGEST_CHANNEL_ID is set, but docs-agent reads no such variable, so it is ignored: did you mean DIGEST_CHANNEL?',
      'MINTLIFY_TOKEN is set, but docs-agent reads no such variable, so it is ignored (README.md lists every variable)',
      'POLL_INTERVAL is set, but docs-agent reads no such variable, so it is ignored: did you mean POLL_INTERVAL_MS?',
      'PREVIEW is set, but docs-agent reads no such variable, so it is ignored: did you mean PREVIEWS?',
      'REDIS_TLS_REJECT_UNAUTHORISED is set, but docs-agent reads no such variable, so it is ignored: did you mean REDIS_TLS_REJECT_UNAUTHORIZED?',
      'REDIS_URI is set, but docs-agent reads no such variable, so it is ignored: did you mean REDIS_URL?',
      'SERVICE is set, but docs-agent reads no such variable, so it is ignored: did you mean SERVICES?',
      // As near SLACK_BOT_TOKEN as SLACK_APP_TOKEN: no guess.
      'SLACK_TOKEN is set, but docs-agent reads no such variable, so it is ignored (README.md lists every variable)',
    ]);
    expect(warnings.join('\n')).not.toMatch(/U0ADA|C0DIGEST|secret|typo|1000/);
    expect(configurationWarnings(valid, loadConfig(valid))).toEqual([]);
    // Redis Cloud's add-on sets REDISCLOUD_URL alone: the bot would keep its state in memory, unsaid.
    const cloud = { ...valid, REDISCLOUD_URL: 'redis://default:pw@redis-123.cloud.example.com:12345' };
    expect(configurationWarnings(cloud, loadConfig(cloud))).toEqual([
      expect.stringMatching(/^REDISCLOUD_URL is set, but REDIS_URL is not.*heroku config:set REDIS_URL=/),
    ]);
    expect(configurationWarnings(cloud, loadConfig(cloud)).join('\n')).not.toContain('pw@');
    const both = { ...cloud, REDIS_URL: cloud.REDISCLOUD_URL };
    expect(configurationWarnings(both, loadConfig(both))).toEqual([]);
  });

  it('names a long variable two slips away from one of ours, whatever its start: REDIS_ULR for REDIS_URL', () => {
    // Unsaid, the bot would run without Redis: its store and queues in memory, lost at each restart.
    const env = { ...valid, REDIS_ULR: 'redis://h:1', LOG_LEVLE: 'debug' };
    expect(configurationWarnings(env, loadConfig(env))).toEqual([
      'LOG_LEVLE is set, but docs-agent reads no such variable, so it is ignored: did you mean LOG_LEVEL?',
      'REDIS_ULR is set, but docs-agent reads no such variable, so it is ignored: did you mean REDIS_URL?',
    ]);
  });

  it('tells that an allowlist entry with no digit is likely a name in capitals, which matches nobody', () => {
    const env = { ...valid, ALLOWED_CHANNEL_IDS: 'C0DOCS GENERAL', ALLOWED_USER_IDS: 'U0ADA WILL' };
    expect(configurationWarnings(env, loadConfig(env))).toEqual([
      expect.stringMatching(/^ALLOWED_USER_IDS has "WILL", with no digit: Slack's IDs have digits/),
      expect.stringMatching(/^ALLOWED_CHANNEL_IDS has "GENERAL", with no digit/),
    ]);
    const digest = { ...valid, DIGEST_CHANNEL: 'CDOCS' };
    expect(configurationWarnings(digest, loadConfig(digest))).toEqual([
      expect.stringMatching(/^DIGEST_CHANNEL has "CDOCS", with no digit/),
    ]);
  });

  it('tells that ALLOWED_CHANNEL_IDS leaves out DIGEST_CHANNEL, whose digest buttons it would refuse', () => {
    const env = { ...valid, DIGEST_CHANNEL: 'C0DIGEST', ALLOWED_CHANNEL_IDS: 'C0DOCS' };
    expect(configurationWarnings(env, loadConfig(env))).toEqual([
      expect.stringContaining(
        'DIGEST_CHANNEL is not in ALLOWED_CHANNEL_IDS: the digest is posted, but its "Fix with the docs agent" buttons answer',
      ),
    ]);
    for (const fine of [
      { ...env, ALLOWED_CHANNEL_IDS: 'C0DOCS,C0DIGEST' },
      { ...env, ALLOWED_CHANNEL_IDS: undefined },
      { ...env, DIGEST_STRUGGLES: '0' }, // no buttons
    ]) {
      expect(configurationWarnings(fine, loadConfig(fine))).toEqual([]);
    }
  });

  it('tells that Socket Mode listens on no port when PORT is set (a web dyno would be stopped)', () => {
    const env = { ...valid, SLACK_APP_TOKEN: 'xapp-1-A0APP-1-abc', PORT: '5000' };
    expect(configurationWarnings(env, loadConfig(env))).toEqual([
      expect.stringContaining('Socket Mode and listens on no port, yet PORT is set'),
    ]);
    const noPort = { ...env, PORT: undefined };
    expect(configurationWarnings(noPort, loadConfig(noPort))).toEqual([]);
  });

  it('says nothing of the port to a process with only the worker role, which listens for nothing anyway', () => {
    const env = {
      ...valid,
      REDIS_URL: 'redis://127.0.0.1:6379',
      SERVICES: 'worker',
      SLACK_APP_TOKEN: 'xapp-1-A0APP-1-abc',
      PORT: '5000',
    };
    expect(loadConfig(env).slack.socketMode).toBe(true);
    expect(configurationWarnings(env, loadConfig(env))).toEqual([]);
  });

  it('says nothing of the port to a one-off run (npm run digest on a one-off dyno has PORT too)', () => {
    for (const [name, value] of Object.entries({
      ...valid,
      ENV_FILE: 'none',
      SLACK_APP_TOKEN: 'xapp-1-A0APP-1-abc',
      PORT: '5000',
    })) {
      vi.stubEnv(name, value);
    }
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
    expect(readConfiguration('npm run digest cannot run', { receivesRequests: false })).toBeDefined();
    expect(readConfiguration()).toBeDefined();
    expect(lines.filter((line) => line.includes('PORT is set'))).toHaveLength(1);
  });

  it('a problem stops npm run digest in its own words, every problem at once', () => {
    for (const [name, value] of Object.entries({ ...valid, ENV_FILE: 'none', LOG_LEVEL: 'loud' })) {
      vi.stubEnv(name, value);
    }
    vi.stubEnv('MINTLIFY_PROJECT_ID', undefined);
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
    expect(readConfiguration('npm run digest cannot run', { receivesRequests: false })).toBeUndefined();
    const said = lines.join('');
    expect(said).toMatch(/^npm run digest cannot run: 2 configuration problems\n/);
    expect(said).toContain('  - MINTLIFY_PROJECT_ID is missing');
    expect(said).toContain('  - LOG_LEVEL must be one of debug, info, warn, error');
    expect(said).not.toContain('docs-agent cannot start');
  });

  it('are logged once as the bot reads its configuration, and the bot starts', () => {
    for (const [name, value] of Object.entries({ ...valid, ENV_FILE: 'none', ALLOWED_USERS: 'U0ADA' })) {
      vi.stubEnv(name, value);
    }
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
    expect(readConfiguration()).toBeDefined();
    expect(lines.filter((line) => line.includes('ALLOWED_USERS'))).toEqual([
      expect.stringMatching(/WARN {2}docs-agent ALLOWED_USERS is set, .*did you mean ALLOWED_USER_IDS\?\n$/),
    ]);
  });

  it('reads the first variable of a .env file saved with a byte order mark (Windows PowerShell, older Notepad)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-bom-'));
    const envFile = join(dir, '.env');
    // As `Set-Content -Encoding UTF8` writes it: a BOM first, CRLF line endings.
    writeFileSync(
      envFile,
      `\uFEFFALLOWED_USER_IDS=U0ADA\r\n${Object.entries(valid)
        .map(([name, value]) => `${name}=${value}`)
        .join('\r\n')}\r\n`,
    );
    // Unset, so that what the file sets is taken away after the test.
    for (const name of [...Object.keys(valid), 'ALLOWED_USER_IDS', '\uFEFFALLOWED_USER_IDS']) {
      vi.stubEnv(name, undefined);
    }
    vi.stubEnv('ENV_FILE', envFile);
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
    try {
      const config = readConfiguration();
      // The allowlist written in the file holds: the bot is not left open to everyone.
      expect(config?.access.userIds).toEqual(new Set(['U0ADA']));
      expect(lines.join('')).not.toContain('ALLOWED_USER_IDS is set, but docs-agent reads no such variable');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    // Windows PowerShell 5.1's `>` and `Out-File` write UTF-16LE with its byte order mark.
    ['UTF-16LE', (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
    [
      'UTF-16BE',
      (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]),
    ],
  ])('reads every variable of a .env file saved as %s', (_encoding, encode) => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-agent-utf16-'));
    const envFile = join(dir, '.env');
    const variables = { ...valid, ALLOWED_USER_IDS: 'U0ADA', DIGEST_CHANNEL: 'C0DIGEST' };
    const text = Object.entries(variables)
      .map(([name, value]) => `${name}=${value}\r\n`)
      .join('');
    writeFileSync(envFile, encode(text));
    // Unset, so that what the file sets is taken away after the test.
    for (const name of Object.keys(variables)) vi.stubEnv(name, undefined);
    vi.stubEnv('ENV_FILE', envFile);
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
    try {
      const config = readConfiguration();
      expect(lines.join('')).toBe('');
      expect(config?.slack.botToken).toBe(valid.SLACK_BOT_TOKEN);
      expect(config?.mintlify.projectId).toBe(valid.MINTLIFY_PROJECT_ID);
      expect(config?.access.userIds).toEqual(new Set(['U0ADA']));
      expect(config?.digest.channel).toBe('C0DIGEST');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('REDIS_URL’s password in the log', () => {
  it('is redacted both as written in the URL (percent-encoded) and as sent to Redis (decoded)', () => {
    const config = loadConfig({ ...valid, REDIS_URL: 'rediss://:s3cr3t%23pw%25x@redis.example.com:6379' });
    expect(secretsOf(config)).toEqual(expect.arrayContaining(['s3cr3t%23pw%25x', 's3cr3t#pw%x']));
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: secretsOf(config), sink: (l) => lines.push(l) });
    logger.error('connect to rediss://:s3cr3t%23pw%25x@redis.example.com failed: AUTH s3cr3t#pw%x');
    expect(lines[0]).not.toMatch(/s3cr3t/);
  });
});

describe('the logger', () => {
  it('redacts every secret from every line, and honours the level', () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      secrets: ['xoxb-secret', 'mint_key'],
      sink: (l) => lines.push(l),
    });
    logger.debug('not shown');
    logger.error(
      'call failed',
      { headers: { authorization: 'Bearer mint_key' } },
      new Error('token xoxb-secret'),
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('ERROR');
    expect(lines[0]).toContain('[redacted]');
    expect(lines[0]).not.toMatch(/xoxb-secret|mint_key/);
    expect(redact('a mint_key b', ['mint_key'])).toBe('a [redacted] b');
  });

  it('redacts a secret every time it appears in a line, not only the first', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', secrets: ['mint_key'], sink: (l) => lines.push(l) });
    // A request dump names the key in its URL and again in its headers.
    logger.warn('GET https://api.example/?key=mint_key failed', {
      headers: { authorization: 'Bearer mint_key' },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('mint_key');
    expect(lines[0]?.split('[redacted]')).toHaveLength(3);
  });
});
