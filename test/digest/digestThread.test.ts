import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { mentionEvent } from '../support/slackRequests.js';
import { chooseShortcut, submit } from '../support/shortcut.js';
import { visitorsRows as rows } from '../support/visitors.js';
import { heldStep } from '../support/leases.js';
import { requestState } from '../support/redis.js';

let h: BotHarness;
afterEach(async () => h?.close());

const BOT = 'U0BOT'; // the Slack fake's bot user
const followUps = (h: BotHarness) => h.mintlify.requestsFor('sendMessage');

/** `/docs-agent digest` in #C0DOCS: the digest's ts, once it is posted. */
async function postedDigest(h: BotHarness): Promise<string> {
  h.mintlify.setVisitors(rows(30), { human: 400, ai: 50, total: 430 });
  await h.command('digest', { channel_id: 'C0DOCS' });
  const digest = await h.slack.waitForCall('chat.postMessage');
  await h.bot.drained();
  return String(digest.response.ts);
}

/** The app_mention event of Ada's message `said`, in the thread of `thread`. */
const mentionIn = (said: { ts: string; text?: string }, thread: string) =>
  mentionEvent({ ts: said.ts, text: said.text, thread_ts: thread });

describe('a digest’s thread stays the digest’s', () => {
  it('a mention there starts a job whose card is posted in the channel, and the talk after it is not sent to the job', async () => {
    h = await startBot();
    const digest = await postedDigest(h);
    const said = h.slack.seedMessage('C0DOCS', {
      user: 'U0ADA',
      text: `<@${BOT}> fix the broken link on /quickstart`,
      thread_ts: digest,
    });
    await h.event(mentionIn(said, digest));

    const card = await h.slack.waitForCall('chat.postMessage', (call) =>
      JSON.stringify(call.args.blocks ?? '').includes('fix the broken link'),
    );
    expect(card.args.channel).toBe('C0DOCS');
    expect(card.args.thread_ts).toBeUndefined();
    // The job gets the digest itself as context (the bot's own message, left out of the thread's).
    const prompt = String((h.mintlify.requestsFor('createJob')[0]?.body as { prompt: string }).prompt);
    expect(prompt).toContain('The docs digest this thread is under');
    expect(prompt).toMatch(/Docs digest: .* \(UTC\)/);
    expect(prompt).toMatch(/\*1\.\* \/page-\d+/);
    // The card links the message it came from, in the digest's thread.
    expect(JSON.stringify(card.args.blocks)).toContain(`p${said.ts.replace('.', '')}`);
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(told.args).toMatchObject({ channel: 'C0DOCS', user: 'U0ADA', thread_ts: digest });
    expect(String(told.args.text)).toContain(`p${String(card.response.ts).replace('.', '')}|its card>`);

    // People go on talking about the digest: nothing of it reaches the job.
    const chat = h.slack.seedMessage('C0DOCS', {
      user: 'U0BEA',
      text: 'anyone looked at the sso one?',
      thread_ts: digest,
    });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0BEA',
      ts: chat.ts,
      text: chat.text,
      thread_ts: digest,
    });
    await h.bot.drained();
    expect(followUps(h)).toEqual([]);
    expect(h.slack.message('C0DOCS', chat.ts)?.reactions ?? []).toEqual([]);
    expect(await h.bot.context.jobs.records.byThread('C0DOCS', digest)).toBeUndefined();
  });

  it('a mention there leaves the thread to people while its job is created: their talk meanwhile waits for no job', async () => {
    h = await startBot();
    const digest = await postedDigest(h);
    const create = heldStep();
    h.mintlify.injectFault('createJob', { until: create.until });
    const said = h.slack.seedMessage('C0DOCS', {
      user: 'U0ADA',
      text: `<@${BOT}> fix the broken link on /quickstart`,
      thread_ts: digest,
    });
    await h.event(mentionIn(said, digest));
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(1);

    const chat = h.slack.seedMessage('C0DOCS', {
      user: 'U0BEA',
      text: 'anyone looked at the sso one?',
      thread_ts: digest,
    });
    const talk = { type: 'message', channel: 'C0DOCS', channel_type: 'channel', user: 'U0BEA' };
    await h.event({ ...talk, ts: chat.ts, text: chat.text, thread_ts: digest }, { eventId: 'EvCHAT' });
    // Done with while Mintlify still creates the job: its card is not for this thread.
    await expect.poll(() => requestState(h.config.store.namespace, 'thread_reply-EvCHAT')).toBe('completed');
    create.release();
    await h.bot.drained();
    expect(followUps(h)).toEqual([]);
    expect(h.logs.filter((line) => line.includes('waits for the job starting in its thread'))).toEqual([]);
  });

  it('“Send to docs agent” on the digest posts the card in the channel, linking the digest', async () => {
    h = await startBot();
    const digest = await postedDigest(h);
    const text = h.slack.message('C0DOCS', digest)?.text ?? '';
    await chooseShortcut(h, { ts: digest, user: BOT, text });
    const opened = await h.slack.waitForCall('views.open');
    // The form says where the card will be: in the channel, as it is posted, not in the digest's thread.
    const form = JSON.stringify(opened.args.view);
    expect(form).toMatch(/digest[^"]*\(then in the channel/);
    await submit(h, opened, 'Make the top page easier to find');

    const card = await h.slack.waitForCall('chat.postMessage', (call) =>
      JSON.stringify(call.args.blocks ?? '').includes('Make the top page easier to find'),
    );
    expect(card.args.thread_ts).toBeUndefined();
    expect(JSON.stringify(card.args.blocks)).toContain('|the docs digest>');
    await h.bot.drained();
    expect(await h.bot.context.jobs.records.byThread('C0DOCS', digest)).toBeUndefined();
  });

  it('“Send to docs agent” on the digest, or on a reply under it, gives the job the digest itself, as a mention there does', async () => {
    h = await startBot();
    const digest = await postedDigest(h);
    const prompt = (index: number) =>
      String((h.mintlify.requestsFor('createJob')[index]?.body as { prompt: string }).prompt);

    // On the digest: its words are in its blocks, its text only the notification's line.
    const text = h.slack.message('C0DOCS', digest)?.text ?? '';
    await chooseShortcut(h, { ts: digest, user: BOT, text });
    await submit(h, await h.slack.waitForCall('views.open'), 'Add a summary to the third page listed');
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(1);
    expect(prompt(0)).toMatch(/\*3\.\* \/page-\d+/);

    // On a reply in its thread, the whole thread asked for: the digest is no person's message of it.
    const reply = h.slack.seedMessage('C0DOCS', {
      user: 'U0ADA',
      text: 'the third one has no summary',
      thread_ts: digest,
    });
    await chooseShortcut(h, { ts: reply.ts, user: 'U0ADA', text: reply.text, thread_ts: digest });
    const opened = (await h.slack.waitForCalls('views.open', 2))[1]!;
    await submit(h, opened, 'Add the summary Ada asks for', true);
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(2);
    expect(prompt(1)).toMatch(/\*3\.\* \/page-\d+/);
    expect(prompt(1)).toContain('the third one has no summary');
  });

  it('another app’s message marked as a digest is not the bot’s: a mention under it starts a job whose card takes its thread', async () => {
    h = await startBot();
    const lookalike = h.slack.seedMessage('C0DOCS', {
      user: 'U0OTHER',
      bot_id: 'B0OTHER',
      text: 'Weekly docs digest',
      metadata: {
        event_type: 'docs_agent_digest',
        event_payload: { period: '2026-11-16', channel: 'C0DOCS' },
      },
    });
    const said = h.slack.seedMessage('C0DOCS', {
      user: 'U0ADA',
      text: `<@${BOT}> fix the broken link on /quickstart`,
      thread_ts: lookalike.ts,
    });
    await h.event(mentionIn(said, lookalike.ts));
    const card = await h.slack.waitForCall('chat.postMessage', (call) =>
      JSON.stringify(call.args.blocks ?? '').includes('fix the broken link'),
    );
    expect(card.args.thread_ts).toBe(lookalike.ts);
  });
});
