import { once } from 'node:events';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { describe, type ExpectStatic, it } from 'vitest';
import { startBot } from '../support/botHarness.js';
import { botEnv, runBot, testProcesses } from '../support/botProcess.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';

// Each test has fakes, a Redis and a bot process of its own: they run at once (most of each is the
// bot's start, and its wait on a Redis that does not answer).
describe.concurrent('Redis at start', () => {
  it('when REDIS_URL is set but Redis does not answer, the bot says so clearly and exits non-zero, never falling back to memory', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const redis = await startPrivateRedis();
    await redis.close(); // a port where nothing listens any more
    const password = 'redis-password-value-42';
    const bot = runBot(
      botEnv(slack, mintlify, { REDIS_URL: `redis://:${password}@127.0.0.1:${redis.port}` }),
    );
    keep(bot);

    // It exits rather than retry for ever (the test's own time limit would end a wait that does not).
    expect(await bot.exited).toBe(1);
    const output = bot.output();
    expect(output).toContain(
      `docs-agent cannot start: Redis at redis://127.0.0.1:${redis.port} did not answer`,
    );
    expect(output).toContain('Check REDIS_URL');
    expect(output).not.toContain('state is kept in memory'); // no silent fallback
    expect(output).not.toContain('listening on port');
    expect(output).not.toContain(password);
    expect(output.match(/ERROR/g)).toHaveLength(1); // one line, not a retry log per attempt
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it.for<[name: string, setup: string, auth: string, said: string, path?: string]>([
    [
      'a wrong password',
      'CONFIG SET requirepass right-password-42',
      ':wrong-password-42@',
      'refused the password',
    ],
    [
      'a URL without its password',
      'CONFIG SET requirepass right-password-42',
      '',
      'wants a password, and REDIS_URL gives none: write it as redis://:<password>@host:port',
    ],
    [
      'an ACL user without INFO',
      'ACL SETUSER limited on >limited-password-42 ~* &* +@all -@dangerous',
      'limited:limited-password-42@',
      "refused a command to REDIS_URL's user. The bot and BullMQ need its data, scripting and INFO commands",
    ],
    [
      'a password it has none of',
      'CONFIG SET maxmemory 0',
      ':unset-password-42@',
      'has no password set, but REDIS_URL gives one',
    ],
    [
      'a database it does not have',
      'CONFIG SET maxmemory 0',
      '',
      'has no database 99 (ERR DB index is out of range)',
      '/99',
    ],
  ])(
    'when Redis refuses %s, the bot says which in plain words and exits',
    async ([, setup, auth, said, path = ''], t) => {
      const { expect } = t;
      const { startFakes, keep } = testProcesses(t);
      const { slack, mintlify } = await startFakes();
      const redis = await startPrivateRedis();
      try {
        expect(await redis.command(setup)).toContain('+OK');
        const bot = runBot(
          botEnv(slack, mintlify, { REDIS_URL: `redis://${auth}127.0.0.1:${redis.port}${path}` }),
        );
        keep(bot);
        expect(await bot.exited).toBe(1);
        const output = bot.output();
        expect(output).toContain(
          `docs-agent cannot start: Redis at redis://127.0.0.1:${redis.port}${path} ${said}`,
        );
        expect(output).not.toContain('-password-42');
        expect(output).not.toContain('listening on port');
      } finally {
        await redis.close();
      }
    },
  );

  it('when REDIS_URL names a read-only replica (a reader endpoint), the bot says so before it writes, and exits', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const primary = await startPrivateRedis();
    const replica = await startPrivateRedis();
    try {
      // A Redis the bot has used before: the start has nothing to write, and READONLY would come only later.
      expect(await primary.command('SET docs-agent:store-layout 2')).toContain('+OK');
      expect(await replica.command(`REPLICAOF 127.0.0.1 ${primary.port}`)).toContain('+OK');
      await expect.poll(() => replica.command('GET docs-agent:store-layout')).toContain('2');
      const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: replica.url }));
      keep(bot);
      // A bot that starts listens: the test fails then, rather than wait out its time limit.
      expect(await Promise.race([bot.exited, bot.listening().then(() => 'listening')])).toBe(1);
      const output = bot.output();
      expect(output).toContain(
        `docs-agent cannot start: Redis at ${replica.url} is a read-only replica: REDIS_URL points at a replica (a reader endpoint?)`,
      );
      expect(output).toContain('Point REDIS_URL at the primary');
      expect(output).not.toContain('listening on port');
    } finally {
      await replica.close();
      await primary.close();
    }
  });

  it('when a Redis without a password takes no more clients, the bot names the connection limit, not TLS', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const redis = await startPrivateRedis();
    // Other processes (another deployment, the old release during a deploy) hold every connection it takes.
    const other = connect(redis.port, '127.0.0.1');
    await once(other, 'connect');
    other.write('CONFIG SET maxclients 1\r\n');
    expect(String((await once(other, 'data'))[0])).toContain('+OK');
    try {
      const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: redis.url }));
      keep(bot);
      expect(await Promise.race([bot.exited, bot.listening().then(() => 'listening')])).toBe(1);
      const output = bot.output();
      // As with a password ("refused the connection: it has as many clients as it takes"): Redis said
      // "max number of clients reached" before it closed the connection.
      expect(output).toContain(`docs-agent cannot start: Redis at ${redis.url} refused the connection`);
      expect(output).toContain('maxclients');
      expect(output).not.toContain('use a rediss:// URL');
    } finally {
      other.destroy();
      await redis.close();
    }
  });

  it('when a Redis over TLS (rediss://, as hosted plans are) takes no more clients, the bot names the connection limit among the causes', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const redis = await startPrivateRedis({ tls: true });
    // Other processes hold every connection it takes.
    const other = tlsConnect({ port: redis.port, host: '127.0.0.1', rejectUnauthorized: false });
    await once(other, 'secureConnect');
    other.write('CONFIG SET requirepass plan-password\r\n');
    expect(String((await once(other, 'data'))[0])).toContain('+OK');
    other.write('AUTH plan-password\r\n');
    expect(String((await once(other, 'data'))[0])).toContain('+OK');
    other.write('CONFIG SET maxclients 1\r\n');
    expect(String((await once(other, 'data'))[0])).toContain('+OK');
    try {
      const bot = runBot(
        botEnv(slack, mintlify, {
          REDIS_URL: redis.url.replace('rediss://', 'rediss://:plan-password@'),
          REDIS_TLS_CA: redis.certificateFile ?? '',
        }),
      );
      keep(bot);
      expect(await Promise.race([bot.exited, bot.listening().then(() => 'listening')])).toBe(1);
      const output = bot.output();
      // Over TLS Redis closes a connection past its maxclients before the handshake, unable to say why:
      // the cause is named among those that close it so.
      const said = output.split('\n').find((line) => line.includes('cannot start'));
      expect(said).toContain(`docs-agent cannot start: Redis at ${redis.url} did not answer`);
      expect(said).toContain(
        'Over TLS this is also how a Redis that takes no more clients closes a connection',
      );
      expect(said).toContain('maxclients');
    } finally {
      other.destroy();
      await redis.close();
    }
  });

  it('when REDIS_URL names a Redis Cluster node, the bot says cluster mode is not supported, and exits', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const node = await startClusterNode(expect);
    try {
      const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: node.url }));
      keep(bot);
      // A bot that starts listens: the test fails then, rather than wait out its time limit.
      expect(await Promise.race([bot.exited, bot.listening().then(() => 'listening')])).toBe(1);
      const output = bot.output();
      expect(output).toContain(
        `docs-agent cannot start: Redis at ${node.url} runs Redis Cluster (cluster mode), which the bot does not support`,
      );
      expect(output).toContain('use a Redis without cluster mode, by its primary endpoint');
      expect(output).not.toContain('listening on port');
    } finally {
      await node.close();
    }
  });

  it('when the password in REDIS_URL holds a % that is not percent-encoded, the bot says to write %25, not "URI malformed"', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const redis = await startPrivateRedis();
    try {
      const bot = runBot(
        botEnv(slack, mintlify, { REDIS_URL: `redis://:pass%word-42@127.0.0.1:${redis.port}` }),
      );
      keep(bot);
      expect(await bot.exited).toBe(1);
      const output = bot.output();
      expect(output).toContain('docs-agent cannot start: 1 configuration problem');
      expect(output).toContain(
        'REDIS_URL has a user name or password with a % that is not percent-encoded: write % as %25',
      );
      expect(output).not.toContain('URI malformed');
      expect(output).not.toContain('word-42');
    } finally {
      await redis.close();
    }
  });

  it('when REDIS_URL has a path that is not a database number, the bot names it as a configuration problem, not as a Redis that did not answer', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const redis = await startPrivateRedis();
    try {
      // A trailing slash after the database, or a name where the number goes: the Redis client
      // cannot read either, and would not even try to connect.
      for (const path of ['/0/', '/docs-agent']) {
        const bot = runBot(
          botEnv(slack, mintlify, { REDIS_URL: `redis://:path-password-42@127.0.0.1:${redis.port}${path}` }),
        );
        keep(bot);
        expect(await bot.exited).toBe(1);
        const output = bot.output();
        expect(output).toContain('docs-agent cannot start: 1 configuration problem');
        expect(output).toContain(
          'REDIS_URL has a path that is not a database number: after host:port, write nothing or /<number> (/0)',
        );
        expect(output).not.toContain('did not answer');
        expect(output).not.toContain('Invalid pathname');
        expect(output).not.toContain('path-password-42');
      }
      expect(slack.callsTo('auth.test')).toEqual([]); // told before anything is asked of Slack
      // A database number is taken.
      const bot = runBot(botEnv(slack, mintlify, { REDIS_URL: `${redis.url}/0` }));
      keep(bot);
      await bot.listening();
    } finally {
      await redis.close();
    }
  });

  it('when Redis refuses more clients than the store’s, the log names the queues left without a worker, and why', async ({
    expect,
  }) => {
    const redis = await startPrivateRedis();
    // The store's connection and the workers' own get in; most workers' blocking connections do not.
    expect(await redis.command('CONFIG SET maxclients 4')).toContain('+OK');
    const h = await startBot({ env: { REDIS_URL: redis.url }, workersReadyWithinMs: 1_000 });
    try {
      await expect
        .poll(() => h.logs.find((line) => line.includes('could not connect to Redis within 1 s')), {
          timeout: 10_000,
        })
        .toBeDefined();
      const said = h.logs.find((line) => line.includes('could not connect to Redis within 1 s')) ?? '';
      expect(said).toMatch(/ERROR/);
      expect(said).toContain('maxclients');
      expect(said).toContain('opens 6 connections'); // no weekly digest set up here: one worker fewer
      // Room made (a plan raised): the workers get in, and the log says so once.
      // (Through the bot's own connection: Redis takes no new one.)
      expect(await h.bot.store.redis?.configSet('maxclients', '100')).toBe('OK');
      const connected = () =>
        h.logs.filter((line) => line.includes('every queue worker is connected to Redis now'));
      await expect.poll(() => connected().length, { timeout: 20_000 }).toBe(1);
      expect(connected()[0]).toMatch(/INFO/);
    } finally {
      await h.close();
      await redis.close();
    }
  });

  it('without REDIS_URL, the bot runs in memory only because it was asked to, and says so', async (t) => {
    const { expect } = t;
    const { startFakes, keep } = testProcesses(t);
    const { slack, mintlify } = await startFakes();
    const bot = runBot(botEnv(slack, mintlify));
    keep(bot);
    await bot.listening();
    expect(bot.output()).toContain(
      'REDIS_URL is not set: state is kept in memory and every job thread is forgotten on restart',
    );
  });
});

/** A Redis Cluster node (cluster mode on) holding every slot: what ElastiCache's cluster mode answers. */
async function startClusterNode(expect: ExpectStatic): Promise<PrivateRedis> {
  const node = await startPrivateRedis({
    args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
  });
  expect(await node.command('CLUSTER ADDSLOTSRANGE 0 16383')).toContain('+OK');
  await expect.poll(() => node.command('CLUSTER INFO')).toContain('cluster_state:ok');
  return node;
}
