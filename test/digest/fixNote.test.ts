import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { fixesNoted, noteFixOnDigest } from '../../src/digest/fixNote.js';
import { FIX_WITH_AGENT_ACTION, type StruggleValue } from '../../src/digest/strugglesMessage.js';
import { testWorkspace } from '../fakes/slack/ids.js';
import { type SlackFake, startSlackFake } from '../fakes/slackFake.js';

const TOKEN = 'xoxb-fix-note-test';
const CHANNEL = 'C0DIGEST';
let slack: SlackFake | undefined;

afterEach(async () => {
  await slack?.close();
  slack = undefined;
});

const struggle: StruggleValue = { kind: 'search', subject: 'rate limits', count: 4, range: '16–22 Nov 2026' };
const bot = { userId: testWorkspace.botUserId, botId: testWorkspace.botId };

/** A posted digest with the one item, its line as `text`. */
function seedDigest(fake: SlackFake, text: string) {
  return fake.seedMessage(CHANNEL, {
    user: testWorkspace.botUserId,
    bot_id: testWorkspace.botId,
    text: 'Docs digest',
    blocks: [
      {
        type: 'section',
        block_id: 'struggle-search-0',
        text: { type: 'plain_text', text },
        accessory: {
          type: 'button',
          action_id: FIX_WITH_AGENT_ACTION,
          text: { type: 'plain_text', text: 'Fix with the docs agent' },
          value: JSON.stringify(struggle),
        },
      },
    ],
  });
}

describe('the note of a fix on the digest', () => {
  it('is left off once the item’s text would pass Slack’s 3,000 characters: the item and earlier notes stay whole', async () => {
    slack = await startSlackFake({ botToken: TOKEN });
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: slack.apiUrl });
    const line = '🔍 “rate limits”  ·  searched 4 times, no result clicked';
    const notes = Array.from({ length: 120 }, (_, i) => `🛠 Person ${i} started a job for this`);
    let text = line;
    for (const note of notes) if (`${text}\n${note}`.length <= 3_000 - 40) text = `${text}\n${note}`;
    const posted = seedDigest(slack, text);
    const parts = { userNames: async () => 'Grace Hopper, who has a rather long display name', bot };
    const digest = { channel: CHANNEL, ts: posted.ts, struggle };

    await noteFixOnDigest(client, { warn: () => {} }, parts, digest, 'U0GRACE');
    const after = slack.message(CHANNEL, posted.ts)?.blocks as Array<{ text: { text: string } }>;
    expect(after[0]!.text.text).toBe(text);
    expect(slack.callsTo('chat.update')).toHaveLength(0);

    // With room, the note is added at the end.
    const roomy = seedDigest(slack, line);
    await noteFixOnDigest(client, { warn: () => {} }, parts, { ...digest, ts: roomy.ts }, 'U0GRACE');
    const noted = slack.message(CHANNEL, roomy.ts)?.blocks as Array<{ text: { text: string } }>;
    expect(noted[0]!.text.text).toBe(
      `${line}\n🛠 Grace Hopper, who has a rather long display name started a job for this`,
    );

    // Exactly 3,000 characters with the note: that still fits.
    const note = '\n🛠 Grace Hopper, who has a rather long display name started a job for this';
    const full = `${line}${'.'.repeat(3_000 - line.length - note.length)}`;
    const atLimit = seedDigest(slack, full);
    await noteFixOnDigest(client, { warn: () => {} }, parts, { ...digest, ts: atLimit.ts }, 'U0GRACE');
    const fitted = slack.message(CHANNEL, atLimit.ts)?.blocks as Array<{ text: { text: string } }>;
    expect(fitted[0]!.text.text).toBe(`${full}${note}`);
    expect(fitted[0]!.text.text).toHaveLength(3_000);
  });

  it('notes each fix by someone Slack cannot name, as it cannot tell them apart; a named person once', async () => {
    slack = await startSlackFake({ botToken: TOKEN });
    const client = new webApi.WebClient(TOKEN, { slackApiUrl: slack.apiUrl });
    const line = '🔍 “rate limits”  ·  searched 4 times, no result clicked';
    const posted = seedDigest(slack, line);
    const digest = { channel: CHANNEL, ts: posted.ts, struggle };
    const unnamed = { userNames: async () => undefined, bot };
    const named = { userNames: async () => 'ada', bot };

    await noteFixOnDigest(client, { warn: () => {} }, unnamed, digest, 'U0HIDDEN1');
    await noteFixOnDigest(client, { warn: () => {} }, unnamed, digest, 'U0HIDDEN2');
    await noteFixOnDigest(client, { warn: () => {} }, named, digest, 'U0ADA');
    await noteFixOnDigest(client, { warn: () => {} }, named, digest, 'U0ADA');

    const noted = slack.message(CHANNEL, posted.ts)?.blocks as Array<{ text: { text: string } }>;
    expect(noted[0]!.text.text).toBe(
      [
        line,
        '🛠 Someone started a job for this',
        '🛠 Someone started a job for this',
        '🛠 ada started a job for this',
      ].join('\n'),
    );
  });

  it('names each person once, someone Slack would not name too', () => {
    const text = ['line', '🛠 ada started a job for this', '🛠 Someone started a job for this'].join('\n');
    expect(fixesNoted(`${text}\n🛠 Someone started a job for this`)).toEqual(['ada', 'Someone']);
  });
});
