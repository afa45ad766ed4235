import { webApi } from '@slack/bolt';
import { afterEach, expect, it } from 'vitest';
import { readThread, readThreadMessage } from '../../src/slack/threadMessages.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';
import { SECRETS } from '../support/botHarness.js';

let slack: SlackFake | undefined;
afterEach(async () => slack?.close());

it('keeps of a thread only what a prompt can use of each message: a thread of long messages is not held whole', async () => {
  slack = await startSlackFake({ botToken: SECRETS.botToken });
  const long = 'x'.repeat(40_000);
  const parent = slack.seedMessage('C0DOCS', { user: 'U0ADA', text: long });
  for (let n = 0; n < 3; n += 1) {
    slack.seedMessage('C0DOCS', {
      user: 'U0BEA',
      text: long,
      thread_ts: parent.ts,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: long.slice(0, 3_000) } }],
    });
  }
  const client = new webApi.WebClient(SECRETS.botToken, { slackApiUrl: slack.apiUrl });
  const { messages } = await readThread(client, 'C0DOCS', parent.ts);
  expect(messages).toHaveLength(4);
  for (const message of messages) {
    expect(message.text?.length).toBeLessThanOrEqual(4_000); // a prompt quotes 3,000 of it at most
    expect(Object.keys(message).sort()).toEqual(['text', 'ts', 'user']);
  }
});

it('reads one chosen message whole: the shortcut quotes it in full', async () => {
  slack = await startSlackFake({ botToken: SECRETS.botToken });
  const parent = slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'spec' });
  const chosen = slack.seedMessage('C0DOCS', {
    user: 'U0BEA',
    text: 'y'.repeat(10_000),
    thread_ts: parent.ts,
  });
  const client = new webApi.WebClient(SECRETS.botToken, { slackApiUrl: slack.apiUrl });
  expect((await readThreadMessage(client, 'C0DOCS', parent.ts, chosen.ts))?.text).toHaveLength(10_000);
});

it.each([
  ['only on the first page', false],
  ['at the top of every page', true],
])(
  'keeps the request that opened a long thread: past 1,000 replies, the oldest replies go, never the parent (Slack sending it %s)',
  async (_, threadParentOnEveryPage) => {
    slack = await startSlackFake({ botToken: SECRETS.botToken, threadParentOnEveryPage });
    const parent = slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'Document the rate limits' });
    for (let n = 1; n <= 1_100; n += 1) {
      slack.seedMessage('C0DOCS', { user: 'U0BEA', text: `reply ${n}`, thread_ts: parent.ts });
    }
    const client = new webApi.WebClient(SECRETS.botToken, { slackApiUrl: slack.apiUrl });

    const { messages, cut } = await readThread(client, 'C0DOCS', parent.ts);

    expect(cut).toBe('older');
    expect(messages).toHaveLength(1_001);
    expect(messages[0]?.text).toBe('Document the rate limits');
    expect(messages[1]?.text).toBe('reply 101');
    expect(messages.at(-1)?.text).toBe('reply 1100');
    expect(messages.filter((message) => message.text === 'Document the rate limits')).toHaveLength(1);
  },
);
