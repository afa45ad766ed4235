import { afterEach, expect, it } from 'vitest';
import { createClient } from '@keyv/redis';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import type { SocketModeAck, SocketModeServer } from '../fakes/slack/socketMode.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';
import { type PrivateRedis, startPrivateRedis } from '../support/privateRedis.js';
import { MESSAGE_LOST } from '../../src/listeners/events/lostMessage.js';

const APP_TOKEN = 'xapp-1-test-app-level-token';
/** What the person sees once their command is queued (src/listeners/commands/docsAgentCommand.ts). */
const STARTING = 'Starting a docs agent job: its card will appear here.';
let h: BotHarness | undefined;
afterEach(async () => h?.close());

it('in Socket Mode (SLACK_APP_TOKEN set), takes /docs-agent over the WebSocket and starts the job', async () => {
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  h = await startBot({ slack, env: { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: undefined } });
  const socket = slack.socketMode;
  if (!socket) throw new Error('the fake has no Socket Mode');
  await socket.connected();
  expect(slack.callsTo('apps.connections.open')[0]?.token).toBe(APP_TOKEN);

  const ack = await socket.send('slash_commands', {
    command: '/docs-agent',
    text: 'Document the new --dry-run flag',
    user_id: 'U0ADA',
    channel_id: 'C0DOCS',
    team_id: 'T0TEAM',
    api_app_id: 'A0APP',
    response_url: slack.responseUrl(),
    trigger_id: '1.2.3',
  });
  // The person is told the job is starting (not that it failed, nor to try again).
  expect(ack.payload).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining(STARTING) });

  const card = await slack.waitForCall('chat.postMessage');
  expect(card.args.channel).toBe('C0DOCS');
  expect(h.mintlify.requestsFor('createJob')[0]?.body).toEqual({ prompt: 'Document the new --dry-run flag' });
  await h.close();
  await slack.close();
  h = undefined;
});

it('in Socket Mode, opens no socket before Slack confirms the bot token, and a refused token stops the start', async () => {
  // Bolt's socket receiver acknowledges an event it cannot authorize, and Slack never sends it again.
  const slack = await startSlackFake({ botToken: 'xoxb-9999-another-bot-token', appToken: APP_TOKEN });
  try {
    await expect(
      startBot({ slack, env: { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: undefined } }),
    ).rejects.toThrow('Slack refused SLACK_BOT_TOKEN (invalid_auth)');
    expect(slack.callsTo('auth.test')).toHaveLength(1);
    expect(slack.callsTo('apps.connections.open')).toEqual([]);
  } finally {
    await slack.close();
  }
});

type SocketModeBody = (
  bot: BotHarness,
  slack: SlackFake,
  socket: SocketModeServer,
  redis: PrivateRedis,
) => Promise<void>;

/**
 * A bot in Socket Mode on a Redis of its own (`env` added to its environment), its socket open:
 * `body` runs then, and the bot, its Slack and its Redis are closed after it.
 */
async function withSocketModeBot(
  options: { holdEventForMs?: number; env?: Record<string, string> },
  body: SocketModeBody,
): Promise<void> {
  const redis = await startPrivateRedis();
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  try {
    const { env, ...rest } = options;
    const bot = await startBot({
      slack,
      env: { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: undefined, REDIS_URL: redis.url, ...env },
      ...rest,
    });
    h = bot;
    const socket = slack.socketMode;
    if (!socket) throw new Error('the fake has no Socket Mode');
    await socket.connected();
    await body(bot, slack, socket, redis);
  } finally {
    await h?.close();
    h = undefined;
    await slack.close();
    await redis.close();
  }
}

it('in Socket Mode at LOG_LEVEL=debug, the envelopes logged carry no verification token and no response_url, nor the socket URL its ticket', async () => {
  // Slack's Socket Mode client logs each envelope as it came; its token and response_url let anyone
  // who reads the log pass for Slack or post in the channel.
  const verificationToken = 'Vt0kenFromSlackSettings';
  await withSocketModeBot({ env: { LOG_LEVEL: 'debug' } }, async (bot, slack, socket) => {
    const responseUrl = slack.responseUrl('logged-envelope');
    await socket.send('slash_commands', {
      token: verificationToken,
      command: '/docs-agent',
      text: 'Document the debug logs',
      user_id: 'U0ADA',
      channel_id: 'C0DOCS',
      team_id: 'T0TEAM',
      api_app_id: 'A0APP',
      response_url: responseUrl,
      trigger_id: '1.2.3',
    });
    const asked = slack.seedMessage('C0DOCS', { user: 'U0ADA', text: '<@U0BOT> Document the log format' });
    await socket.send('events_api', {
      ...envelope('Ev0LOGGED', {
        type: 'app_mention',
        channel: 'C0DOCS',
        user: 'U0ADA',
        text: asked.text,
        ts: asked.ts,
      }),
      token: verificationToken,
    });
    await bot.bot.drained();

    const received = bot.logs.filter((line) => line.includes('Received a message on the WebSocket'));
    // The envelopes are still logged, what they ask included.
    expect(received.some((line) => line.includes('Document the debug logs'))).toBe(true);
    expect(received.some((line) => line.includes('Document the log format'))).toBe(true);
    expect(bot.logs.filter((line) => line.includes(verificationToken))).toEqual([]);
    expect(bot.logs.filter((line) => line.includes('logged-envelope'))).toEqual([]);
    // The socket's URL is logged (apps.connections.open's answer), without the ticket that opens it.
    expect(bot.logs.some((line) => line.includes('ticket=[redacted]'))).toBe(true);
    for (const ticket of socket.tickets) expect(bot.logs.filter((line) => line.includes(ticket))).toEqual([]);
  });
});

/** A bot in Socket Mode whose Redis went away once the socket was open: `body` runs then. */
function withRedisAway(options: { holdEventForMs?: number }, body: SocketModeBody): Promise<void> {
  return withSocketModeBot(options, async (bot, slack, socket, redis) => {
    await redis.stop({ keepData: true });
    await expect.poll(() => bot.logs.some((line) => line.includes('Redis is unreachable'))).toBe(true);
    await body(bot, slack, socket, redis);
  });
}

/**
 * A bot in Socket Mode (logging at debug) whose Redis takes no write until `unpause()`, and /docs-agent
 * `command.text` from @ada in #C0DOCS sent over its socket and received: its listener waits on the
 * queue's add. `body` runs then, with the command's ack to come (undefined if none came); the bot, its
 * Slack and its Redis are closed after it.
 */
async function withCommandHeld(
  command: { text: string; trigger_id: string; responseId?: string },
  body: (held: {
    bot: BotHarness;
    slack: SlackFake;
    socket: SocketModeServer;
    unpause: () => Promise<unknown>;
    acked: Promise<SocketModeAck | undefined>;
  }) => Promise<void>,
): Promise<void> {
  await withSocketModeBot({ env: { LOG_LEVEL: 'debug' } }, async (bot, slack, socket, redis) => {
    const raw = createClient({ url: redis.url });
    try {
      await raw.connect();
      // Far longer than the test needs: the unpause, not the clock, ends it.
      await raw.sendCommand(['CLIENT', 'PAUSE', '10000', 'WRITE']);
      const acked = socket
        .send('slash_commands', {
          command: '/docs-agent',
          text: command.text,
          user_id: 'U0ADA',
          channel_id: 'C0DOCS',
          team_id: 'T0TEAM',
          api_app_id: 'A0APP',
          response_url: slack.responseUrl(command.responseId),
          trigger_id: command.trigger_id,
        })
        .catch(() => undefined);
      await expect
        .poll(() =>
          bot.logs.some(
            (line) => line.includes('Received a message on the WebSocket') && line.includes(command.text),
          ),
        )
        .toBe(true);
      const unpause = () => raw.sendCommand(['CLIENT', 'UNPAUSE']);
      await body({ bot, slack, socket, unpause, acked });
    } finally {
      await raw.quit().catch(() => {});
    }
  });
}

/** An Events API envelope, as Slack sends it over the socket. */
const envelope = (eventId: string, event: Record<string, unknown>) => ({
  type: 'event_callback',
  team_id: 'T0TEAM',
  api_app_id: 'A0APP',
  event_id: eventId,
  event_time: 1_800_000_000,
  event,
});

it('in Socket Mode, holds a mention the queue could not take while Redis was away, and queues it once Redis answers', async () => {
  // Socket Mode acknowledges an event before the listener runs: Slack never sends it again.
  await withRedisAway({}, async (bot, slack, socket, redis) => {
    const asked = slack.seedMessage('C0DOCS', { user: 'U0ADA', text: '<@U0BOT> Document the offline mode' });
    await socket.send(
      'events_api',
      envelope('Ev0OFFLINE', {
        type: 'app_mention',
        channel: 'C0DOCS',
        user: 'U0ADA',
        text: asked.text,
        ts: asked.ts,
      }),
    );
    await redis.start();

    const card = await slack.waitForCall('chat.postMessage', undefined, 20_000);
    expect(card.args).toMatchObject({ channel: 'C0DOCS', thread_ts: asked.ts });
    expect(bot.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
      { prompt: 'Document the offline mode' },
    ]);
  });
});

it('in Socket Mode, gives up on a DM held past its hold while Redis stays away, and tells its author to send it again', async () => {
  await withRedisAway({ holdEventForMs: 3_000 }, async (bot, slack, socket, redis) => {
    const asked = slack.seedMessage('D0ADA', { user: 'U0ADA', text: 'Document the long outage' });
    const dm = {
      type: 'message',
      channel: 'D0ADA',
      channel_type: 'im',
      user: 'U0ADA',
      text: asked.text,
      ts: asked.ts,
    };
    await socket.send('events_api', envelope('Ev0LONGOUTAGE', dm));
    const told = await slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'D0ADA', 10_000);
    expect(told.args).toMatchObject({ text: MESSAGE_LOST });
    expect(
      bot.logs.some((line) => line.includes('was never queued, and is lost') && line.includes('told so')),
    ).toBe(true);
    // Redis back, the DM stays given up on: no job for it.
    await redis.start();
    await expect
      .poll(() => bot.logs.some((line) => line.includes('Redis is reachable again')), { timeout: 10_000 })
      .toBe(true);
    await bot.bot.drained();
    expect(bot.mintlify.requestsFor('createJob')).toEqual([]);
  });
});

it('in Socket Mode, a wrong SLACK_APP_TOKEN stops the start, naming the variable', async () => {
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  try {
    const wrong = 'xapp-1-another-app-level-token';
    const started = startBot({ slack, env: { SLACK_APP_TOKEN: wrong, SLACK_SIGNING_SECRET: undefined } });
    await expect(started).rejects.toThrow('Slack refused SLACK_APP_TOKEN (invalid_auth)');
    await expect(started).rejects.not.toThrow(wrong);
  } finally {
    await slack.close();
  }
});

it('in Socket Mode, an app-level token Slack answers token_revoked stops the start, naming the variable', async () => {
  // Slack's client asks again for ever on this code (it gives up on invalid_auth and four others only).
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  try {
    slack.failNext('apps.connections.open', { error: 'token_revoked' }, 1_000);
    await expect(
      startBot({ slack, env: { SLACK_APP_TOKEN: APP_TOKEN, SLACK_SIGNING_SECRET: undefined } }),
    ).rejects.toThrow('Slack refused SLACK_APP_TOKEN (token_revoked)');
  } finally {
    await slack.close();
  }
});

it('in Socket Mode, a wrong SLACK_APP_TOKEN refused after a passing failure of Slack stops the start, naming the variable', async () => {
  // Slack's client asks again after fatal_error, from within its first try: the refusal comes there.
  const slack = await startSlackFake({ botToken: SECRETS.botToken, appToken: APP_TOKEN });
  try {
    slack.failNext('apps.connections.open', { error: 'fatal_error' });
    const wrong = 'xapp-1-another-app-level-token';
    await expect(
      startBot({ slack, env: { SLACK_APP_TOKEN: wrong, SLACK_SIGNING_SECRET: undefined } }),
    ).rejects.toThrow('Slack refused SLACK_APP_TOKEN (invalid_auth)');
    expect(slack.callsTo('apps.connections.open')).toHaveLength(2);
  } finally {
    await slack.close();
  }
});

it('in Socket Mode, a stop lets a command still being queued answer Slack before the socket closes', async () => {
  // Redis takes no write until the test says so: the command's listener waits on the queue's add.
  await withCommandHeld(
    { text: 'Document the pause flag', trigger_id: '4.5.6' },
    async ({ bot, unpause, acked }) => {
      // The stop begins while the add is held; only then does Redis take it.
      const stopping = bot.bot.stop();
      await unpause();
      const ack = await acked;
      // An ack at all is what the stop owes (without its wait, none comes). Its words depend on how soon
      // the unpause came: within the listener's 1 s the job is starting, on a loaded machine "try again".
      expect(ack?.payload).toMatchObject({
        response_type: 'ephemeral',
        text: expect.stringMatching(
          /Starting a docs agent job: its card will appear here|please try again shortly/,
        ),
      });
      await stopping;
    },
  );
});

it('in Socket Mode, a command whose ack the dropped socket could not carry is answered through its response_url: its job starts once, and the person knows', async () => {
  // The command's add waits on Redis while Slack renews the socket (as it does every few hours).
  const command = { text: 'Document the renewal flag', trigger_id: '7.8.9', responseId: 'renewal' };
  await withCommandHeld(command, async ({ bot, slack, socket, unpause, acked }) => {
    await socket.dropConnections();
    await unpause();
    await acked;
    // Slack showed the person that the command failed (no ack came), and its job runs all the same:
    // they are told so, or they would ask again and start it twice.
    await expect
      .poll(() => slack.callsTo('response_url').filter((call) => call.responseId === 'renewal'))
      .toEqual([
        expect.objectContaining({
          args: expect.objectContaining({ text: expect.stringContaining(STARTING) }),
        }),
      ]);
    await slack.waitForCall('chat.postMessage');
    await bot.bot.drained();
    expect(bot.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(bot.logs.join('\n')).not.toContain('a Slack request was not queued');
  });
});
