import { afterEach, describe, expect, it } from 'vitest';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { startSlackFake } from '../fakes/slackFake.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { uniqueNamespace } from '../support/redis.js';

const CHANNEL = 'C0DIGEST';
const WEEKLY = { DIGEST_CHANNEL: CHANNEL, DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'Europe/Paris' };

const harnesses: BotHarness[] = [];
const shared: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await Promise.all(shared.splice(0).map((fake) => fake.close()));
});

describe('the weekly digest whose post lands but whose answer is lost', () => {
  it('is in the channel once: the post is not sent again blind', async () => {
    const slack = await startSlackFake({ botToken: SECRETS.botToken });
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    shared.push(slack, mintlify);
    mintlify.setVisitors([{ path: '/quickstart', human: 40, ai: 12, total: 50 }]);
    // Slack stores the digest, then its edge answers 503: the bot never hears it landed.
    slack.failNext('chat.postMessage', { status: 503, landed: true, channel: CHANNEL });

    const h = await startBot({
      env: WEEKLY,
      slack,
      mintlify,
      namespace: uniqueNamespace('digest-lost'),
      // The try that met the 503 fails; the next one, soon after, looks for the post by its mark.
      digestTries: { attempts: 4, backoffMs: 50 },
    });
    harnesses.push(h);
    await expect
      .poll(
        () =>
          h.logs.some((line) =>
            /posted the catch-up digest|catch-up digest for .*: already posted/.test(line),
          ),
        {
          timeout: 15_000,
        },
      )
      .toBe(true);

    const digests = slack
      .history(CHANNEL)
      .filter(
        (message) =>
          (message.metadata as { event_type?: string } | undefined)?.event_type === 'docs_agent_digest',
      );
    expect(digests).toHaveLength(1);
  });
});
