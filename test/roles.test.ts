import { createClient } from '@keyv/redis';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUESTS_QUEUE } from '../src/queue/queueNames.js';
import { type MintlifyFake, startMintlifyFake } from './fakes/mintlifyFake.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { PROJECT_ID, SECRETS } from './support/botHarness.js';
import { type BotProcess, botEnv, runBot } from './support/botProcess.js';
import { TEST_REDIS_URL, uniqueNamespace } from './support/redis.js';
import { mentionEvent, sendEvent, sendSlashCommand } from './support/slackRequests.js';

const bots: BotProcess[] = [];
const fakes: Array<SlackFake | MintlifyFake> = [];
afterEach(async () => {
  for (const bot of bots.splice(0)) bot.child.kill('SIGKILL');
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function world() {
  const slack = await startSlackFake({ botToken: SECRETS.botToken });
  const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
  fakes.push(slack, mintlify);
  const env = (services: string) =>
    botEnv(slack, mintlify, {
      REDIS_URL: TEST_REDIS_URL,
      STORE_NAMESPACE: uniqueNamespace('roles'),
      SERVICES: services,
      POLL_INTERVAL_MS: '200',
    });
  return { slack, mintlify, env };
}

/** The Slack requests waiting in the queue for a worker (BullMQ's wait list, under the namespace). */
async function waitingRequests(namespace: string): Promise<number> {
  const client = createClient({ url: TEST_REDIS_URL });
  await client.connect();
  try {
    return await client.lLen(`${namespace}:${REQUESTS_QUEUE}:wait`);
  } finally {
    await client.quit();
  }
}

function start(env: Record<string, string>): BotProcess {
  const bot = runBot(env);
  bots.push(bot);
  return bot;
}

describe('SERVICES: the web and worker roles in processes of their own', () => {
  it('a web process only acknowledges and queues; a worker started later does the work, once', async () => {
    const { slack, mintlify, env } = await world();
    const webEnv = env('web');
    const web = start(webEnv);
    const url = await web.listening();

    const ack = await sendSlashCommand(url, SECRETS.signingSecret, {
      text: 'Document the queue',
      response_url: slack.responseUrl(),
    });
    expect(ack.status).toBe(200);
    expect(ack.json).toMatchObject({ text: expect.stringContaining('Starting a docs agent job') });
    const mention = mentionEvent({ text: '<@U0BOT> Document the mention door', ts: '1800000001.000100' });
    expect((await sendEvent(url, SECRETS.signingSecret, mention)).status).toBe(200);
    // The web process never does the work itself: both requests wait in the queue, for as long as no
    // worker runs (a worker in the web process would have taken the first while the second came).
    const waiting = () => waitingRequests(webEnv.STORE_NAMESPACE as string);
    expect(await waiting()).toBe(2);
    // Started in full (a worker, had it one, would be running by now), and none runs.
    expect(await web.printed(/runs the web role only|worker is running/)).toMatch(/runs the web role only/);
    expect(await waiting()).toBe(2);
    expect(mintlify.requestsFor('createJob')).toHaveLength(0);
    expect(slack.callsTo('chat.postMessage')).toHaveLength(0);

    // Same Redis and namespace, no port: the worker takes what was queued before it existed.
    const worker = start({ ...webEnv, SERVICES: 'worker' });
    await worker.printed(/worker is running/);
    await slack.waitForCalls('chat.postMessage', 2, (call) => call.response.ok === true);
    await expect.poll(() => mintlify.requestsFor('createJob').length).toBe(2);
    expect(worker.output()).not.toMatch(/listening on port/);

    // Both jobs are followed by the worker to their end, each card posted once.
    const cards = slack.callsTo('chat.postMessage').filter((call) => call.response.ok);
    expect(cards).toHaveLength(2);
    const jobIds = slack
      .history('C0CHANNEL')
      .concat(slack.history('C0DOCS'))
      .map((message) => (message.metadata as { event_payload?: { job_id?: string } })?.event_payload?.job_id)
      .filter((id): id is string => typeof id === 'string');
    expect(new Set(jobIds).size).toBe(2);
    for (const jobId of jobIds) mintlify.setJob(jobId, { status: 'completed' });
    await slack.waitForCalls('chat.postMessage', 4, (call) => call.response.ok === true);
    expect(mintlify.requestsFor('createJob')).toHaveLength(2);
  });

  it('a deployment of another Slack app on the same Redis and STORE_NAMESPACE (staging beside production) is named in the log, with the setting that keeps the two apart', async () => {
    const { env } = await world();
    // Staging: another Slack app in another workspace, another Mintlify project, the same Redis, and
    // STORE_NAMESPACE left at its default on both (here, one namespace both are given).
    const stagingToken = 'xoxb-staging-0000-bot-token-value';
    const stagingKey = 'mint_staging_admin_key_value_abcdef';
    const stagingSlack = await startSlackFake({
      botToken: stagingToken,
      teamId: 'T0STAGE',
      teamName: 'Acme Staging',
      teamDomain: 'acme-staging',
      appId: 'A0STAGE',
      botId: 'B0STAGE',
      botUserId: 'U0STAGEBOT',
    });
    const stagingMintlify = await startMintlifyFake({ apiKey: stagingKey, projectId: 'proj_staging' });
    fakes.push(stagingSlack, stagingMintlify);
    const productionEnv = env('web');
    const staging = start({
      ...botEnv(stagingSlack, stagingMintlify, {
        SLACK_BOT_TOKEN: stagingToken,
        MINTLIFY_API_KEY: stagingKey,
        MINTLIFY_PROJECT_ID: 'proj_staging',
        REDIS_URL: TEST_REDIS_URL,
        STORE_NAMESPACE: productionEnv.STORE_NAMESPACE as string,
      }),
    });
    await staging.printed(/worker is running/);

    // Production starts beside it: its log names the other app and the setting that keeps them apart.
    const production = start({ ...productionEnv, SERVICES: 'web,worker' });
    await production.printed(/worker is running/);
    await expect
      .poll(() => production.output())
      .toMatch(
        /another Slack app's deployment \(bot B0STAGE(, app A0STAGE)?\) runs on this Redis with the same STORE_NAMESPACE \(.+\)/,
      );
    expect(production.output()).toContain('its own STORE_NAMESPACE');
  });

  it('SERVICES=web without REDIS_URL is refused at start, in plain words', async () => {
    const { slack, mintlify } = await world();
    const bot = start(botEnv(slack, mintlify, { SERVICES: 'web' }));
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toMatch(/SERVICES needs REDIS_URL/);
  });
});
