/**
 * The floor of the durable hand-off: the bare Bolt app (bench/support/bareBoltApp.ts) plus what the
 * web role cannot do without, and nothing else. Its listener puts the command on a BullMQ queue on
 * Redis (the node-redis client of `@keyv/redis`, through BullMQ's node-redis adapter, as the bot's)
 * and acknowledges once the add has landed; it listens once the queue can take requests. Nothing
 * works the queue: the benchmarks delete its namespace afterwards.
 *
 * Configured as the bare app, plus REDIS_URL and STORE_NAMESPACE (the queue's prefix).
 *
 *   node --import tsx bench/support/queuedBoltApp.ts
 */
import { createClient } from '@keyv/redis';
import { App, HTTPReceiver } from '@slack/bolt';
import { createNodeRedisClient, Queue } from 'bullmq';

const signingSecret = process.env.SLACK_SIGNING_SECRET ?? '';
const apiUrl = process.env.SLACK_API_URL;
const port = Number(process.env.PORT ?? 3000);

const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
await client.connect();
const queue = new Queue('requests', {
  connection: createNodeRedisClient(client),
  prefix: process.env.STORE_NAMESPACE ?? 'bench-queued-bolt-app',
  defaultJobOptions: { removeOnComplete: true },
});
await queue.waitUntilReady();

const receiver = new HTTPReceiver({ signingSecret, endpoints: '/slack/events', processBeforeResponse: true });
const app = new App({
  token: process.env.SLACK_BOT_TOKEN ?? '',
  receiver,
  ...(apiUrl ? { clientOptions: { slackApiUrl: apiUrl } } : {}),
});
app.command('/docs-agent', async ({ ack, command, body }) => {
  await queue.add('command', body, { jobId: `command-${command.trigger_id}` });
  await ack();
});
app.event('message', async () => {});

const server = (await app.start(port)) as unknown as { address(): { port: number } };
process.stderr.write(
  `${new Date().toISOString()} INFO  queued Bolt app is listening on port ${server.address().port}\n`,
);
process.once(
  'SIGTERM',
  () =>
    void app
      .stop()
      .then(() => queue.close())
      .then(() => client.quit())
      .finally(() => process.exit(0)),
);
