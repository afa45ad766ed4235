/**
 * The floor of the ack and boot benchmarks: a bare Bolt app in HTTP mode whose listeners only call
 * ack(). It is configured by the same variables as the bot (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET,
 * SLACK_API_URL, PORT) and uses the bot's receiver settings (HTTPReceiver on /slack/events, the ack
 * sent once the listener returns); everything else is Bolt's default. Once listening it writes a
 * line like the bot's ("... listening on port N"), which is what the benchmarks wait for.
 *
 *   node --import tsx bench/support/bareBoltApp.ts
 */
import { App, HTTPReceiver } from '@slack/bolt';

const signingSecret = process.env.SLACK_SIGNING_SECRET ?? '';
const apiUrl = process.env.SLACK_API_URL;
const port = Number(process.env.PORT ?? 3000);

const receiver = new HTTPReceiver({ signingSecret, endpoints: '/slack/events', processBeforeResponse: true });
const app = new App({
  token: process.env.SLACK_BOT_TOKEN ?? '',
  receiver,
  ...(apiUrl ? { clientOptions: { slackApiUrl: apiUrl } } : {}),
});
app.command('/docs-agent', async ({ ack }) => ack());
app.event('message', async () => {});

const server = (await app.start(port)) as unknown as { address(): { port: number } };
process.stderr.write(
  `${new Date().toISOString()} INFO  bare Bolt app is listening on port ${server.address().port}\n`,
);
process.once('SIGTERM', () => void app.stop().finally(() => process.exit(0)));
