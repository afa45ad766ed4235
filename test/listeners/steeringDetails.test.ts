import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { mentionEvent, messageChanged } from '../support/slackRequests.js';

const BOT = 'U0BOT'; // the Slack fake's bot user

let h: BotHarness;
afterEach(async () => h?.close());

const followUps = (h: BotHarness) => h.mintlify.requestsFor('sendMessage').map((r) => r.body);

/** The app_mention event of the message `ts` in `thread`, as typed (or edited: `extra`). */
const mentionOf =
  (ts: string, thread: string) =>
  (text: string, extra: Record<string, unknown> = {}) => ({
    ...mentionEvent({ ts, thread_ts: thread, text }),
    ...extra,
  });

async function jobThread(h: BotHarness): Promise<string> {
  await h.command('Document the export flag', { channel_id: 'C0DOCS', user_id: 'U0ADA' });
  const card = await h.slack.waitForCall('chat.postMessage');
  const thread = String(card.response.ts);
  await expect.poll(() => h.bot.context.jobs.records.byThread('C0DOCS', thread)).toBeDefined();
  return thread;
}

/**
 * @ada's mention of the bot in a job's thread, with a typo, sent to the job as its one follow-up: the
 * thread, the message, and its app_mention event as typed (or edited).
 */
async function mentionSentToJob(h: BotHarness) {
  h.slack.seedUser({ id: 'U0ADA', name: 'ada' });
  const thread = await jobThread(h);
  const said = h.slack.seedMessage('C0DOCS', {
    user: 'U0ADA',
    text: `<@${BOT}> Also document the --sinse flag`,
    thread_ts: thread,
  });
  const mention = mentionOf(said.ts, thread);
  await h.event(mention(said.text));
  await expect.poll(() => followUps(h).length).toBe(1);
  await h.bot.drained();
  return { thread, said, mention };
}

describe('steering a job, and the doors, in the details', () => {
  it('a reply that only pings a colleague is not an instruction for the agent', async () => {
    h = await startBot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat' });
    const thread = await jobThread(h);
    const ping = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: '<@U0CAT>', thread_ts: thread });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0ADA',
      text: ping.text,
      ts: ping.ts,
      thread_ts: thread,
    });
    // A later reply that does go through: once it has arrived, the one before was handled.
    const real = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'Add an example', thread_ts: thread });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0ADA',
      text: real.text,
      ts: real.ts,
      thread_ts: thread,
    });
    await expect.poll(() => followUps(h).length).toBeGreaterThan(0);
    await h.bot.drained();
    // Sent, "@cat" would spend an agent use and set a finished job working again.
    expect(followUps(h)).toEqual([{ prompt: 'Add an example' }]);
  });

  it('a reply with an indented code sample reaches the job with its indentation', async () => {
    h = await startBot();
    const thread = await jobThread(h);
    const text =
      'Use this example in the config page:\n```\nretry:\n  attempts: 3\n  backoff:\n    max: 30s\n```';
    const said = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text, thread_ts: thread });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0ADA',
      text,
      ts: said.ts,
      thread_ts: thread,
    });
    await expect.poll(() => followUps(h).length).toBe(1);
    // YAML whose indentation is lost means something else (or nothing).
    expect(followUps(h)[0]).toEqual({ prompt: text });
  });

  it('a DM of a file alone, told to say it in words, edited to add the words, starts the job with the file named', async () => {
    h = await startBot();
    const DM = 'D0ADA';
    const seeded = h.slack.seedMessage(DM, { user: 'U0ADA', text: '' });
    const files = [{ id: 'F0SHOT', name: 'error.png' }];
    await h.event({
      type: 'message',
      subtype: 'file_share',
      channel: DM,
      channel_type: 'im',
      user: 'U0ADA',
      text: '',
      ts: seeded.ts,
      files,
    });
    const told = await h.slack.waitForCall('chat.postMessage');
    expect(String(told.args.text)).toContain('Tell me in words what to change');
    await h.bot.drained();
    // As the bot asked: the person edits the message to say it in words.
    await h.event({
      type: 'message',
      subtype: 'message_changed',
      channel: DM,
      channel_type: 'im',
      ts: '1800000300.000001',
      message: {
        user: 'U0ADA',
        ts: seeded.ts,
        text: 'Document the error in this screenshot',
        files,
        edited: { user: 'U0ADA', ts: '1800000300.000000' },
      },
    });
    await h.bot.drained();
    // As an edit of a message that got the help, or that Mintlify refused, starts its job.
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    // With the file named, as the message would have had it sent with words at once: “this
    // screenshot” is one the agent is told of, and cannot open.
    expect(h.mintlify.requestsFor('createJob')[0]?.body).toEqual({
      prompt: 'Document the error in this screenshot\n[attached, not included: error.png]',
    });
  });

  it('a bare mention in a job’s thread, answered with the help, edited to add what to change, is sent to the job once', async () => {
    h = await startBot();
    h.slack.seedUser({ id: 'U0ADA', name: 'ada' });
    const thread = await jobThread(h);
    const said = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: `<@${BOT}>`, thread_ts: thread });
    const mention = mentionOf(said.ts, thread);
    await h.event(mention(`<@${BOT}>`));
    // The help, to its author.
    await h.slack.waitForCall('chat.postEphemeral');
    await h.bot.drained();
    // As outside a job's thread such an edit starts the job, here it is the reply it meant to be.
    await h.event(
      mention(`<@${BOT}> Also document the --since flag`, {
        edited: { user: 'U0ADA', ts: '1800000100.000000' },
      }),
    );
    await expect.poll(() => followUps(h)).toEqual([{ prompt: 'Also document the --since flag' }]);
    // Another edit is only an edit.
    await h.event(
      mention(`<@${BOT}> Also document the --since flag.`, {
        edited: { user: 'U0ADA', ts: '1800000200.000000' },
      }),
    );
    await h.bot.drained();
    expect(followUps(h)).toHaveLength(1);
  });

  it('a reply in a job’s thread of a file alone, told to say it in words, edited to add the words, is sent to the job with the file named', async () => {
    h = await startBot();
    const thread = await jobThread(h);
    const files = [{ id: 'F0SHOT', name: 'error.png' }];
    const said = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: '', thread_ts: thread });
    const reply = {
      type: 'message',
      subtype: 'file_share',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0ADA',
      text: '',
      ts: said.ts,
      thread_ts: thread,
      parent_user_id: BOT,
      files,
    };
    await h.event(reply);
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(told.args.text)).toContain('can’t open files');
    await h.bot.drained();
    // As a mention of a file alone would be (or a DM of one): the person edits the reply to say it in words.
    await h.event(
      messageChanged(reply, 'Show the error in this screenshot in the troubleshooting page', {
        ts: '1800000300.000001',
        edited: { user: 'U0ADA', ts: '1800000300.000000' },
      }),
    );
    await expect
      .poll(() => followUps(h))
      .toEqual([
        {
          prompt:
            'Show the error in this screenshot in the troubleshooting page\n[attached, not included: error.png]',
        },
      ]);
  });

  it('a mention sent to a job as a follow-up is not sent again when its typo is fixed a day later', async () => {
    h = await startBot();
    const { said, mention } = await mentionSentToJob(h);
    // A day passes: the message's dedupe (24 h) lapses, as Redis's TTL would let it.
    const { atomic } = h.bot.context.jobs.store;
    const key = `seen:message:C0DOCS:${said.ts}`;
    const holder = await atomic.holder(key);
    expect(holder).toBeDefined();
    await atomic.deleteIfValue(key, holder!);
    // The author fixes a typo: Slack sends the mention again, marked edited.
    await h.event(
      mention(`<@${BOT}> Also document the --since flag`, {
        edited: { user: 'U0ADA', ts: '1800090000.000000' },
      }),
    );
    await h.bot.drained();
    expect(followUps(h)).toHaveLength(1);
  });

  it('a mention sent to a job as a follow-up, edited, is not sent again: its author is told so, once', async () => {
    h = await startBot();
    const { thread, mention } = await mentionSentToJob(h);
    // The author fixes a typo, then another: Slack sends the mention again each time, marked edited.
    for (const ts of ['1800000100.000000', '1800000200.000000'])
      await h.event(mention(`<@${BOT}> Also document the --since flag`, { edited: { user: 'U0ADA', ts } }));
    await h.bot.drained();
    const told = h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === 'U0ADA');
    expect(told.map((call) => String(call.args.text))).toEqual([
      expect.stringContaining('reply again with the change'),
    ]);
    expect(told[0]?.args.thread_ts).toBe(thread);
    expect(followUps(h)).toHaveLength(1);
  });

  it('a reply written before the mention that started the thread’s job (delivered late) is not sent to it again', async () => {
    h = await startBot();
    h.slack.seedUser({ id: 'U0ADA', name: 'ada' });
    h.slack.seedUser({ id: 'U0BEA', name: 'bea' });
    const root = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'Does the CLI retry uploads?' });
    const before = h.slack.seedMessage('C0DOCS', {
      user: 'U0BEA',
      text: 'Yes, 3 times, since v2',
      thread_ts: root.ts,
    });
    const asked = h.slack.seedMessage('C0DOCS', {
      user: 'U0ADA',
      text: `<@${BOT}> document the retry behaviour`,
      thread_ts: root.ts,
    });
    await h.event(mentionEvent({ ts: asked.ts, text: asked.text, thread_ts: root.ts }));
    await expect.poll(() => h.bot.context.jobs.records.byThread('C0DOCS', root.ts)).toBeDefined();
    const prompt = (h.mintlify.requestsFor('createJob')[0]?.body as { prompt: string }).prompt;
    expect(prompt).toContain('bea: Yes, 3 times, since v2'); // in the job's context already
    // Slack delivers Bea's earlier reply late (a retry after a slow ack).
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0BEA',
      text: before.text,
      ts: before.ts,
      thread_ts: root.ts,
    });
    await h.bot.drained();
    expect(followUps(h)).toEqual([]);
    // A reply written after the mention is the job's, as ever.
    const after = h.slack.seedMessage('C0DOCS', { user: 'U0BEA', text: 'Also since v3', thread_ts: root.ts });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0BEA',
      text: after.text,
      ts: after.ts,
      thread_ts: root.ts,
    });
    await expect.poll(() => followUps(h)).toEqual([{ prompt: 'Also since v3' }]);
  });
});
