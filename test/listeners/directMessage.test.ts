import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { requestState } from '../support/redis.js';
import { forwardedMessage } from '../support/slackRequests.js';

let h: BotHarness;
afterEach(async () => h?.close());

const DM = 'D0ADA';
/** A message in the bot's DM, seeded in the fake and delivered as Slack does (`message.im`). */
async function sendDm(
  h: BotHarness,
  text: string,
  extra: {
    thread_ts?: string;
    subtype?: string;
    files?: Array<{ id: string; name: string }>;
    attachments?: Array<Record<string, unknown>>;
  } = {},
) {
  const seeded = h.slack.seedMessage(DM, {
    user: 'U0ADA',
    text,
    ...(extra.thread_ts ? { thread_ts: extra.thread_ts } : {}),
    ...(extra.attachments ? { attachments: extra.attachments } : {}),
  });
  await h.event({
    type: 'message',
    channel: DM,
    channel_type: 'im',
    user: 'U0ADA',
    text,
    ts: seeded.ts,
    ...extra,
  });
  return seeded.ts;
}

/** Slack's word that a message in the bot's DM changed: `message` as it is now; the change has a ts of its own. */
const dmChanged = (h: BotHarness, message: Record<string, unknown>, ts = '1800000300.000001') =>
  h.event({ type: 'message', subtype: 'message_changed', channel: DM, channel_type: 'im', ts, message });

/** A job started by @ada's DM "Document the --json flag", on the record: the DM's ts (its thread's). */
async function dmJob(h: BotHarness): Promise<string> {
  const asked = await sendDm(h, 'Document the --json flag');
  await expect.poll(async () => (await h.bot.context.jobs.records.byThread(DM, asked))?.door).toBe('dm');
  return asked;
}

const SHOT = { id: 'F0SHOT', name: 'shot.png' };
/**
 * A file (shot.png) sent alone, with `text`, in the thread of the DM `asked`, and the bot's word
 * (chat.postMessage) that it can't open files: the file's message ts, and that word.
 */
async function fileAloneInThread(h: BotHarness, asked: string, text = '') {
  const ts = await sendDm(h, text, { thread_ts: asked, subtype: 'file_share', files: [SHOT] });
  const told = await h.slack.waitForCall('chat.postMessage', (call) =>
    String(call.args.text).includes('can’t open files'),
  );
  return { ts, told };
}

describe('a direct message to the bot', () => {
  it('a reply under the DM handled before the DM itself (a name Slack is slow to give) waits for the DM’s job, and goes to it', async () => {
    h = await startBot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat' });
    // Slack is slow to name @cat, whom the DM mentions...
    let named!: () => void;
    h.slack.failNext('users.info', { until: new Promise<void>((resolve) => (named = resolve)) });
    const seeded = h.slack.seedMessage(DM, {
      user: 'U0ADA',
      text: 'Document the --json flag <@U0CAT> added',
    });
    await h.event(
      { type: 'message', channel: DM, channel_type: 'im', user: 'U0ADA', text: seeded.text, ts: seeded.ts },
      { eventId: 'EvDM' },
    );
    await expect.poll(() => h.slack.callsTo('users.info').length).toBeGreaterThan(0);
    // ...while its author adds a reply under it: it waits for the DM's job.
    const reply = h.slack.seedMessage(DM, { user: 'U0ADA', thread_ts: seeded.ts, text: 'Also the CSV one' });
    await h.event(
      {
        type: 'message',
        channel: DM,
        channel_type: 'im',
        user: 'U0ADA',
        text: reply.text,
        ts: reply.ts,
        thread_ts: seeded.ts,
      },
      { eventId: 'EvREPLY' },
    );
    await expect.poll(() => requestState(h.config.store.namespace, 'message_to_bot-EvREPLY')).toBe('delayed');
    named();

    await expect
      .poll(() => h.mintlify.requestsFor('sendMessage').map((r) => r.body))
      .toEqual([{ prompt: 'Also the CSV one' }]);
    await h.bot.drained();
    expect(await requestState(h.config.store.namespace, 'message_to_bot-EvDM')).toBe('completed');
    // One job, of the DM's own words: the reply is its follow-up, not its thread so far.
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    const prompt = (h.mintlify.requestsFor('createJob')[0]?.body as { prompt: string }).prompt;
    expect(prompt).toBe('Document the --json flag @cat added');
  });

  it('starts a job whose card is the reply under it, and replies in that thread steer the job', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'Document the --json flag');
    const card = await h.slack.waitForCall('chat.postMessage');
    expect(card.args).toMatchObject({ channel: DM, thread_ts: asked });
    // Nobody else is in the DM: the card says nothing of keeping replies between people.
    expect(JSON.stringify(card.args.blocks)).toContain('Reply in this thread to steer the job.');
    expect(JSON.stringify(card.args.blocks)).not.toContain('between people');
    // A message outside the thread is another job: the card says so, where follow-ups would go.
    expect(JSON.stringify(card.args.blocks)).toContain(
      'A message here outside this thread starts another job.',
    );
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([
      { prompt: 'Document the --json flag' },
    ]);
    const records = h.bot.context.jobs.records;
    await expect.poll(async () => (await records.byThread(DM, asked))?.door).toBe('dm');

    const reply = await sendDm(h, 'Also the CSV one', { thread_ts: asked });
    const delivered = await h.slack.waitForCall('reactions.add');
    expect(delivered.args).toMatchObject({ channel: DM, timestamp: reply });
    expect(delivered.response.ok).toBe(true);
    await h.bot.drained();
    expect(h.mintlify.requestsFor('sendMessage').map((r) => r.body)).toEqual([
      { prompt: 'Also the CSV one' },
    ]);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1); // the reply steered; it started nothing
  });

  it('a reply written under the DM while its job is being created waits for the job, and goes to it once', async () => {
    h = await startBot();
    let create!: () => void;
    h.mintlify.injectFault('createJob', { until: new Promise<void>((resolve) => (create = resolve)) });
    const asked = await sendDm(h, 'Document the --json flag');
    await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(1);
    // Slack delivers a DM reply to both the DM and the thread-reply listeners: both wait for the job.
    await sendDm(h, 'Also the CSV one', { thread_ts: asked });
    const waiting = () =>
      h.logs.filter((line) => line.includes('a message waits for the job starting in its thread')).length;
    await expect.poll(waiting).toBeGreaterThanOrEqual(2);
    create();

    await expect
      .poll(() => h.mintlify.requestsFor('sendMessage').map((r) => r.body), { timeout: 10_000 })
      .toEqual([{ prompt: 'Also the CSV one' }]);
    await h.bot.drained(15_000);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(1);
  });

  it('in a job’s thread, a mention with only a file is told about files (no mention event comes in a DM)', async () => {
    h = await startBot();
    const asked = await dmJob(h);
    const { told } = await fileAloneInThread(h, asked, '<@U0BOT>'); // the Slack fake's bot user
    // In the DM's job thread, a message that stays (nobody else reads along).
    expect(told.args).toMatchObject({ channel: DM, thread_ts: asked });
    expect(h.mintlify.requestsFor('sendMessage')).toEqual([]);
  });

  it('in a job’s thread, a file alone is told about files in words for the DM, as the thread’s help is', async () => {
    h = await startBot();
    const asked = await dmJob(h);
    const { told } = await fileAloneInThread(h, asked);
    expect(told.args).toMatchObject({ channel: DM, thread_ts: asked });
    // Nobody else reads the bot's DM: nothing of keeping a reply between people.
    expect(String(told.args.text)).not.toMatch(/\/\/|between people/);
  });

  it('in a job’s thread, a reply to a job Mintlify no longer knows is told to start a new one the DM’s way', async () => {
    h = await startBot();
    const asked = await dmJob(h);
    h.mintlify.injectFault('sendMessage', { status: 404 });
    await sendDm(h, 'Also cover the --csv flag', { thread_ts: asked });
    const told = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('no longer knows this job'),
    );
    expect(told.args).toMatchObject({ channel: DM, thread_ts: asked });
    // In the DM a message to the bot outside the thread starts a job, as the thread's news says too.
    expect(String(told.args.text)).toContain('a new message to me, outside this thread');
    expect(String(told.args.text)).not.toContain('/docs-agent');
  });

  it('in a job’s thread, a file alone edited to say what to change is sent to the job; a later edit is not, and its author is told so once', async () => {
    h = await startBot();
    const asked = await dmJob(h);
    const { ts: shot } = await fileAloneInThread(h, asked);
    await h.bot.drained();
    const reply = { user: 'U0ADA', ts: shot, thread_ts: asked, parent_user_id: 'U0ADA', files: [SHOT] };
    await dmChanged(h, {
      ...reply,
      text: 'Show this output in the example',
      edited: { user: 'U0ADA', ts: '1800000300.000000' },
    });
    await expect
      .poll(() => h.mintlify.requestsFor('sendMessage').map((request) => request.body))
      .toEqual([{ prompt: 'Show this output in the example\n[attached, not included: shot.png]' }]);
    // The job has it now: a second edit is not sent, and the person hears so (in the thread: it is their DM).
    for (const [text, ts] of [
      ['Show this output in the JSON example', '1800000400.000000'],
      ['Show this output in the JSON example.', '1800000500.000000'],
    ] as const)
      await dmChanged(h, { ...reply, text, edited: { user: 'U0ADA', ts } }, `${ts.slice(0, -1)}1`);
    await h.bot.drained();
    const told = h.slack
      .callsTo('chat.postMessage')
      .filter((call) => String(call.args.text).includes('reply again with the change'));
    expect(told).toHaveLength(1);
    expect(told[0]?.args).toMatchObject({ channel: DM, thread_ts: asked });
    expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(1);
  });

  it('in a job’s thread, sends a message forwarded there with no words to the job, as in a channel’s job thread', async () => {
    h = await startBot();
    const asked = await dmJob(h);
    const forward = await sendDm(h, '', {
      thread_ts: asked,
      attachments: [forwardedMessage('Does --json print nulls?')],
    });
    const delivered = await h.slack.waitForCall('reactions.add');
    expect(delivered.args).toMatchObject({ channel: DM, timestamp: forward, name: 'white_check_mark' });
    const prompt = (h.mintlify.requestsFor('sendMessage')[0]?.body as { prompt: string }).prompt;
    expect(prompt).toContain('Does --json print nulls?');
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('says why a message of files alone starts nothing, rather than answering with help', async () => {
    h = await startBot();
    await sendDm(h, '', { subtype: 'file_share', files: [{ id: 'F0SHOT', name: 'shot.png' }] });
    // In the bot's DM, a message that stays (nobody else reads along), at its top level.
    const told = await h.slack.waitForCall('chat.postMessage');
    expect(String(told.args.text)).toContain('can’t open files shared in Slack, so I started nothing');
    expect(told.args.thread_ts).toBeUndefined();
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(h.mintlify.requests).toHaveLength(0);
  });

  it('takes a message written with /me (a me_message, as Slack sends it) like any other: it is not left unanswered', async () => {
    h = await startBot();
    // `/me would like the --json flag documented`: Slack sends the words after /me, its subtype me_message.
    await sendDm(h, 'would like the --json flag documented', { subtype: 'me_message' });
    await expect.poll(() => h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(String((h.mintlify.requestsFor('createJob')[0]!.body as { prompt: string }).prompt)).toContain(
      'would like the --json flag documented',
    );
  });

  it('takes a reply also sent to the conversation (thread_broadcast) like any other, with the thread so far', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'help');
    await h.slack.waitForCall('chat.postMessage'); // the help
    await sendDm(h, 'Document the --json flag', { thread_ts: asked, subtype: 'thread_broadcast' });
    await expect
      .poll(() => h.mintlify.requestsFor('createJob').map((r) => (r.body as { prompt: string }).prompt))
      .toEqual([expect.stringMatching(/^Document the --json flag\n\n--- The Slack thread so far/)]);
  });

  it('forwarded a message with what to change, gives the job the forwarded message too, apart from the instruction', async () => {
    h = await startBot();
    // Forwarded to the bot with a comment: the comment is the text, the message an attachment marked is_share.
    await sendDm(h, 'Document the answer to this', {
      attachments: [forwardedMessage('Does the CLI retry failed uploads?')],
    });
    const card = await h.slack.waitForCall('chat.postMessage');
    const prompt = (h.mintlify.requestsFor('createJob')[0]?.body as { prompt: string }).prompt;
    expect(prompt.split('\n')[0]).toBe('Document the answer to this');
    expect(prompt).toContain('Does the CLI retry failed uploads?');
    // The card shows the instruction alone.
    expect(JSON.stringify(card.args.blocks)).not.toContain('retry failed uploads');
  });

  it('answers `help` with how to use the bot, and sends nothing to Mintlify', async () => {
    h = await startBot();
    await sendDm(h, 'help');
    const help = await h.slack.waitForCall('chat.postMessage');
    // In the conversation, as a person would answer, not in a thread under the question.
    expect(help.args).toMatchObject({ channel: DM });
    expect(help.args.thread_ts).toBeUndefined();
    expect(String(help.args.text)).toContain('How to use the docs agent');
    expect(h.mintlify.requests).toHaveLength(0);
  });

  it('starts no job for a greeting, a thanks, or the slash command’s words: help, nothing, their jobs, or where to type it', async () => {
    h = await startBot();
    const answered = (n: number) =>
      h.slack.waitForCalls('chat.postMessage', n).then((calls) => calls[n - 1]!);
    await sendDm(h, 'Hi there!');
    const help = await answered(1);
    expect(String(help.args.text)).toContain('How to use the docs agent');
    await sendDm(h, 'thanks :pray:');
    await sendDm(h, 'status');
    const list = await answered(2);
    expect(String(list.args.text)).toContain('You have no docs agent jobs yet');
    await sendDm(h, 'digest');
    const pointer = await answered(3);
    expect(String(pointer.args.text)).toContain('`/docs-agent digest`');
    for (const answer of [help, list, pointer]) expect(answer.args.thread_ts).toBeUndefined();
    expect(String(pointer.args.text)).toContain('I didn’t start a job');
    // An instruction that opens with a greeting is one.
    await sendDm(h, 'Hi, please document the --json flag');
    await h.slack.waitForCall('chat.postMessage', (call) => String(call.args.text).includes('--json'));
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([
      { prompt: 'Hi, please document the --json flag' },
    ]);
    // Help, the list, the pointer, and the card: nothing answered the thanks.
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(4);
  });

  it('answers a first “Hello there, what can you do?” with the help, as README promises for a greeting or a question about the bot, starting no job', async () => {
    h = await startBot();
    // What a newcomer writes first: each would start an agent job of that name, spending an agent use.
    for (const text of ['Hello there, what can you do?', 'What can you do for me?', 'How can I use you?'])
      await sendDm(h, text);
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([]);
    const answers = h.slack.callsTo('chat.postMessage').map((call) => String(call.args.text));
    expect(answers).toHaveLength(3);
    for (const answer of answers) expect(answer).toContain('How to use the docs agent');
  });

  it('lists the person’s jobs for “my jobs” or “any update?”, while instructions with those words start jobs', async () => {
    h = await startBot();
    for (const text of ['my jobs', 'any update?']) await sendDm(h, text);
    const lists = await h.slack.waitForCalls('chat.postMessage', 2);
    for (const list of lists) expect(String(list.args.text)).toContain('You have no docs agent jobs yet');
    await sendDm(h, 'status codes page needs a 429 row');
    await h.slack.waitForCall('chat.postMessage', (call) => String(call.args.text).includes('429'));
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([
      { prompt: 'status codes page needs a 429 row' },
    ]);
  });

  it('answers a wave alone (👋, :wave:) as it answers “hi”, as `/docs-agent :wave:` is answered, rather than with silence', async () => {
    h = await startBot();
    // `/docs-agent :wave:` is told no job was started, with the help; a DM saying the same gets nothing.
    const typed = await h.command(':wave:');
    expect(String((typed.json as { text: string }).text)).toContain('How to use the docs agent');
    await sendDm(h, ':wave:');
    await sendDm(h, '👋');
    await h.bot.drained();
    const help = h.slack.callsTo('chat.postMessage').map((call) => String(call.args.text));
    expect(help).toHaveLength(2);
    for (const answer of help) expect(answer).toContain('How to use the docs agent');
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
  });

  it('asked “what’s the status?” while a job runs, lists the person’s jobs rather than starting a job called that', async () => {
    h = await startBot();
    await sendDm(h, 'Document the --json flag');
    await h.slack.waitForCall('chat.postMessage', (call) => String(call.args.text).includes('--json'));
    await sendDm(h, 'what’s the status?');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([
      { prompt: 'Document the --json flag' },
    ]);
    const list = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('recent docs agent job'),
    );
    expect(String(list.args.text)).toContain('of yours');
  });

  it('answers “what can you do?”, “test” and a lone “stop” with help: none starts a job', async () => {
    h = await startBot();
    for (const [i, text] of ['what can you do?', 'test', 'stop'].entries()) {
      await sendDm(h, text);
      const help = (await h.slack.waitForCalls('chat.postMessage', i + 1))[i]!;
      expect(String(help.args.text)).toContain('How to use the docs agent');
      // A stop is told first that no door can stop a job.
      expect(String(help.args.text).startsWith('I can’t stop a docs agent job from Slack')).toBe(
        text === 'stop',
      );
    }
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);
  });

  it('in a job’s thread, answers “help”, “hi” or “?” with the thread’s help for the DM, and sends none to the job', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'Document the --verbose flag');
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.thread_ts === asked);
    await h.bot.drained();
    for (const text of ['help', 'hi', '?']) await sendDm(h, text, { thread_ts: asked });
    const helps = () =>
      h.slack
        .callsTo('chat.postMessage')
        .filter((call) => String(call.args.text).startsWith('This thread belongs to a docs agent job'));
    await expect.poll(() => helps().length).toBe(3);
    for (const call of helps()) {
      expect(call.args).toMatchObject({ channel: DM, thread_ts: asked });
      // Nothing of mentions or of keeping a reply between people: words for the DM.
      expect(String(call.args.text)).not.toMatch(/@docs-agent|\/\//);
    }
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    await h.bot.drained();
    expect(h.mintlify.requestsFor('sendMessage')).toHaveLength(0);
  });

  it('edited to say what to change after a greeting got the help, starts the job; a link preview added changes nothing', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'hi');
    await h.slack.waitForCall('chat.postMessage'); // the help
    await h.bot.drained();
    // As Slack sends it: the change has a ts of its own, the message keeps its own.
    let changes = 0;
    const changed = (message: Record<string, unknown>) =>
      dmChanged(h, message, `1800000200.00000${(changes += 1)}`);

    // Slack's own change (a link preview added): no `edited`, nothing happens.
    await changed({ user: 'U0ADA', ts: asked, text: 'hi' });
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);

    await changed({
      user: 'U0ADA',
      ts: asked,
      text: 'hi, please document the --json flag',
      edited: { user: 'U0ADA', ts: '1800000100.000000' },
    });
    await expect
      .poll(() => h.mintlify.requestsFor('createJob').map((r) => r.body))
      .toEqual([{ prompt: 'hi, please document the --json flag' }]);
    const card = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('Docs agent job'),
    );
    expect(card.args.thread_ts).toBe(asked);
  });

  it('edited in a thread, though the reply got the help, starts nothing: only the conversation’s own messages are read again', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'hi');
    await h.slack.waitForCall('chat.postMessage'); // the help
    const reply = await sendDm(h, 'hi', { thread_ts: asked });
    await h.bot.drained();
    await dmChanged(h, {
      user: 'U0ADA',
      ts: reply,
      thread_ts: asked,
      text: 'hi, document the CSV export',
      edited: { ts: '1800000300.000000' },
    });
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
  });

  it('edited after a reply in its thread started a job there, starts nothing more', async () => {
    h = await startBot();
    const asked = await sendDm(h, 'hi');
    await h.slack.waitForCall('chat.postMessage'); // the help
    await sendDm(h, 'Document the --json flag', { thread_ts: asked });
    await expect.poll(() => h.mintlify.requestsFor('createJob')).toHaveLength(1);
    await h.bot.drained();
    await dmChanged(h, {
      user: 'U0ADA',
      ts: asked,
      text: 'hi, document the CSV export',
      edited: { ts: '1800000300.000000' },
    });
    // Handled, and done with (not waiting on the thread's job for ever).
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('from someone outside ALLOWED_USER_IDS gets a polite refusal in the DM, and starts nothing', async () => {
    h = await startBot({ env: { ALLOWED_USER_IDS: 'U0BEA' } });
    await sendDm(h, 'Document the --json flag');
    const refusal = await h.slack.waitForCall('chat.postMessage');
    expect(refusal.args).toMatchObject({ channel: DM });
    expect(String(refusal.args.text)).toContain('only available to some people');
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('ignores the bot’s own posts, edits, and messages in channels', async () => {
    h = await startBot();
    await h.event({
      type: 'message',
      channel: DM,
      channel_type: 'im',
      bot_id: 'B0BOT',
      user: 'U0BOT',
      text: 'a card',
      ts: '1800000000.000100',
    });
    await h.event({
      type: 'message',
      subtype: 'message_changed',
      channel: DM,
      channel_type: 'im',
      ts: '1800000000.000200',
      message: { text: 'x' },
    });
    await h.event({
      type: 'message',
      channel: 'C0DOCS',
      channel_type: 'channel',
      user: 'U0ADA',
      text: 'Document X',
      ts: '1800000000.000300',
    });
    await sendDm(h, 'Document Y');
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((r) => r.body)).toEqual([{ prompt: 'Document Y' }]);
  });
});
