import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { RateLedger } from '../../src/store/rateLedger.js';
import { FAST_POLL, getJobRequests } from '../jobs/followSupport.js';
import { type BotHarness, PROJECT_ID, SECRETS, startBot } from '../support/botHarness.js';
import { startMintlifyFake } from '../fakes/mintlifyFake.js';
import { JobRecords } from '../../src/jobs/jobRecord.js';
import { openStore } from '../../src/store/store.js';
import { forwardedMessage, messageChanged } from '../support/slackRequests.js';
import { heldStep } from '../support/leases.js';
import { uniqueNamespace } from '../support/redis.js';
import { createLogger } from '../../src/log.js';

const harnesses: BotHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0).reverse()) await h.close();
});
const bot = async (options?: Parameters<typeof startBot>[0]) => {
  const h = await startBot(options);
  harnesses.push(h);
  return h;
};

/** Starts a job with the slash command and returns the ts of its card (the job's thread). */
async function startJob(h: BotHarness, channel = 'C0DOCS'): Promise<string> {
  const answered = h.slack.responseUrl(`start-${channel}`);
  await h.command('Document the new --dry-run flag', { channel_id: channel, response_url: answered });
  const card = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === channel);
  const cardTs = String(card.response.ts);
  await expect
    .poll(async () => (await h.bot.context.jobs.records.byThread(channel, cardTs))?.cardTs)
    .toBe(cardTs);
  return cardTs;
}

let nextTs = 1_800_000_000;
const reply = (threadTs: string, text: string, extra: Record<string, unknown> = {}) => {
  nextTs += 1;
  return {
    type: 'message',
    channel: 'C0DOCS',
    channel_type: 'channel',
    user: 'U0BEA',
    text,
    ts: `${nextTs}.000100`,
    thread_ts: threadTs,
    ...extra,
  };
};

const followUps = (h: BotHarness) => h.mintlify.requestsFor('sendMessage');

/**
 * Slack's word that a reply changed (`messageChanged`), the change with a ts of its own; `edited`
 * when its author edited it (Slack's own changes, such as a link preview added, have none).
 */
const changed = (
  original: ReturnType<typeof reply>,
  text: string,
  edited: { user: string; ts: string } | undefined = { user: original.user, ts: `${nextTs + 50}.000100` },
) => messageChanged(original, text, { ts: `${nextTs + 50}.000200`, edited });

/** job-1 completes with its pull request, at Mintlify and in its record, as the follower records it. */
async function completeJob(h: BotHarness): Promise<void> {
  const prLink = 'https://github.com/acme/docs/pull/7';
  h.mintlify.setJob('job-1', { status: 'completed', prLink });
  await h.bot.context.jobs.records.update('job-1', (record) => ({ ...record, status: 'completed', prLink }));
}

describe('replies in a job’s thread', () => {
  it('are sent to the job as follow-ups in readable plain text, and marked as delivered', async () => {
    const h = await bot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat', real_name: 'Cat Lee' });
    const thread = await startJob(h);
    const event = reply(
      thread,
      'Also cover <@U0CAT>’s example from <https://example.com/cli|the CLI page> &amp; flags',
    );
    await h.event(event);

    const delivered = await h.slack.waitForCall('reactions.add');
    expect(delivered.response.ok).toBe(true);
    expect(h.slack.message('C0DOCS', String(event.ts))?.reactions?.map((reaction) => reaction.name)).toEqual([
      'white_check_mark',
    ]);
    expect(delivered.args).toMatchObject({
      channel: 'C0DOCS',
      timestamp: event.ts,
      name: 'white_check_mark',
    });
    expect(followUps(h)).toHaveLength(1);
    expect(followUps(h)[0]?.path).toBe('/v2/agent/proj_test/job/job-1/message');
    expect(followUps(h)[0]?.body).toEqual({
      prompt: 'Also cover @cat’s example from the CLI page (https://example.com/cli) & flags',
    });
  });

  it('ignore conversation between people (//, thanks, OKs), edits, bot posts, top-level messages and other threads', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const aside = reply(thread, '// let’s wait for the PR before adding mroe', { parent_user_id: 'U0BOT' });
    await h.event(aside);
    // Thanks and OKs are for the people in the thread: sent, they would set a finished job working again.
    await h.event(reply(thread, 'Thanks a lot! :tada:'));
    await h.event(reply(thread, 'ok thanks <@U0CAT>'));
    await h.event(reply(thread, 'LGTM'));
    await h.event(reply(thread, '👍'));
    // An aside edited is still an aside; a link preview Slack adds to a reply is no edit of it.
    await h.event(changed(aside, '// let’s wait for the PR before adding more'));
    const linked = reply(thread, '// see https://example.com/pr', { parent_user_id: 'U0BOT' });
    await h.event(linked);
    await h.event(changed(linked, linked.text, undefined));
    await h.event(reply(thread, 'a bot says hi', { bot_id: 'B0OTHER' }));
    await h.event(reply(thread, 'joined', { subtype: 'channel_join' }));
    await h.event({ ...reply(thread, 'top level'), thread_ts: undefined });
    await h.event(reply('1699999999.000001', 'a thread that is not a job'));
    // A reply that does go through, last: once it has arrived, the ones before it were handled.
    await h.event(reply(thread, 'Mention the config file too'));
    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();

    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Mention the config file too' }]);
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
  });

  it('edited after it reached the job: its author is told the agent has it as first written, and it is not sent again', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const sent = reply(thread, 'Document the --sinse flag', { parent_user_id: 'U0BOT' });
    await h.event(sent);
    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();
    // The author fixes what they meant, as Slack users do: Slack sends the change of the message.
    await h.event(changed(sent, 'Document the --since flag'));
    // The agent works on the words it got: the author is told so, rather than believe it has the edit.
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(told.args).toMatchObject({ channel: 'C0DOCS', user: 'U0BEA', thread_ts: thread });
    expect(String(told.args.text)).toContain('reply again with the change');
    // Told once per reply, however often it is edited.
    await h.event(
      changed(sent, 'Document the --since flag (v2)', { user: 'U0BEA', ts: `${nextTs + 60}.000100` }),
    );
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Document the --sinse flag' }]);
  });

  it('edited while held back by an earlier reply still under way: the job gets it as it reads now, once', async () => {
    const h = await bot();
    const thread = await startJob(h);
    // An earlier reply of the thread is still being sent: later ones wait for it.
    const { atomic } = h.bot.context.jobs.store;
    const underWay = `replies-under-way:C0DOCS:${thread}`;
    const earlier = `${reply(thread, 'slow').ts}/${Date.now()}`;
    await atomic.indexAdd(underWay, earlier, Number(earlier.split('/')[0]), undefined, 20_000);
    const waiting = reply(thread, 'Only the CLI page', { parent_user_id: 'U0BOT' });
    await h.event(waiting);
    await h.event(changed(waiting, 'Only the API page, not the CLI one'));
    // Both wait their turn behind the earlier reply (the reply, and its edit).
    await expect.poll(async () => (await atomic.indexAll(underWay)).length).toBe(3);
    await atomic.indexRemove(underWay, earlier);

    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();
    expect(followUps(h).map((request) => request.body)).toEqual([
      { prompt: 'Only the API page, not the CLI one' },
    ]);
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(0);
  });

  /**
   * `sent` is written, and Mintlify is slow to take it (its answer held until `answer.release()`,
   * then a `refusal` status when given); meanwhile its author edits it, and the edit is handled.
   */
  async function editWhileMintlifyTakes(h: BotHarness, refusal?: number) {
    const thread = await startJob(h);
    const answer = heldStep();
    h.mintlify.injectFault(
      'sendMessage',
      refusal ? { status: refusal, retryAfter: '600', until: answer.until } : { until: answer.until },
    );
    const sent = reply(thread, 'Document the --sinse flag', { parent_user_id: 'U0BOT' });
    await h.event(sent);
    await expect.poll(() => followUps(h).length).toBe(1);
    await h.event(changed(sent, 'Document the --since flag'));
    // The edit is handled while the reply is still with Mintlify: it waits for Mintlify’s answer, or is answered at once.
    await expect
      .poll(() => h.slack.callsTo('chat.postEphemeral').length + editWaits(h).length)
      .toBeGreaterThan(0);
    return { sent, answer };
  }
  const editWaits = (h: BotHarness) =>
    h.logs.filter((line) => line.includes('an edit waits for the reply it edits'));
  const toldAuthor = (h: BotHarness) =>
    h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));

  it('edited while Mintlify takes it, then refused: its author is told the agent has neither version, and the edit is not sent', async () => {
    const h = await bot();
    const { answer } = await editWhileMintlifyTakes(h, 429);
    answer.release();

    // The refusal, and then the edit's fate: not "the agent already has your reply".
    await expect.poll(() => toldAuthor(h).length, { timeout: 10_000 }).toBe(2);
    await h.bot.drained();
    expect(toldAuthor(h)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('so I couldn’t send your reply to the job'),
        expect.stringContaining('has neither your reply nor your edit of it'),
      ]),
    );
    expect(toldAuthor(h).join('\n')).not.toContain('already has your reply');
    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Document the --sinse flag' }]);
    expect(h.slack.callsTo('reactions.add')).toEqual([]);
  });

  it('edited while Mintlify takes it, which it does: its author is told the agent has it as first written', async () => {
    const h = await bot();
    const { answer } = await editWhileMintlifyTakes(h);
    answer.release();

    await h.slack.waitForCall('reactions.add');
    await expect
      .poll(() => toldAuthor(h), { timeout: 10_000 })
      .toEqual([expect.stringContaining('already has your reply as you first wrote it')]);
    await h.bot.drained();
    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Document the --sinse flag' }]);
  });

  it('edited while Mintlify takes it, then refused, and edited again: that edit is the author’s next try, and is sent', async () => {
    const h = await bot();
    const { sent, answer } = await editWhileMintlifyTakes(h, 400);
    answer.release();
    await expect.poll(() => toldAuthor(h).length, { timeout: 10_000 }).toBe(2);
    await h.bot.drained();

    // Told to reply again, the author edits the reply once more instead: it goes to the job.
    await h.event(
      changed(sent, 'Document the --since flag, with an example', {
        user: 'U0BEA',
        ts: `${nextTs + 60}.000100`,
      }),
    );
    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();
    expect(followUps(h).map((request) => request.body)).toEqual([
      { prompt: 'Document the --sinse flag' },
      { prompt: 'Document the --since flag, with an example' },
    ]);
    expect(toldAuthor(h)).toHaveLength(2);
  });

  it('take “looks good to me” and “thanks, that’s perfect!” for the OK they are, as “LGTM” is, and do not send them to the job', async () => {
    const h = await bot();
    const thread = await startJob(h);
    // What reviewers write under a ready pull request: sent, each would set the job working again.
    await h.event(reply(thread, 'looks good to me'));
    await h.event(reply(thread, 'Looks great, thanks!'));
    await h.event(reply(thread, 'Thanks, that’s perfect!'));
    await h.event(reply(thread, "that's great"));
    // A reply that does go through, last: once it has arrived, the ones before it were handled.
    await h.event(reply(thread, 'Mention the config file too'));
    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();

    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Mention the config file too' }]);
  });

  it('keep the replies people write under a ready pull request (“Merged, thanks!”, “+1”, “any update?”) from the agent, as “LGTM” and “what’s the status?” are', async () => {
    const h = await bot();
    const thread = await startJob(h);
    await completeJob(h);
    // Sent, each reopens the finished job (its card back to "Working on it"), spends an agent use,
    // and has the agent work on a pull request that may be merged already.
    await h.event(reply(thread, 'Merged, thanks!'));
    await h.event(reply(thread, '+1'));
    await h.event(reply(thread, 'nice one'));
    await h.event(reply(thread, 'Wow, nice!'));
    // Asking people how it goes, as “what’s the status?” is asked (answered with where to look, not sent).
    await h.event(reply(thread, 'any update?'));
    await h.event(reply(thread, 'what’s the status of this?'));
    // A reply that does go through, last: once it has arrived, the ones before it were handled.
    await h.event(reply(thread, 'Mention the config file too'));
    await h.slack.waitForCall('reactions.add');
    await h.bot.drained();

    expect(followUps(h).map((request) => request.body)).toEqual([{ prompt: 'Mention the config file too' }]);
    // Each question told, in its own words, where to look.
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
    expect(told).toEqual([
      expect.stringContaining('I didn’t send “any update” to the agent'),
      expect.stringContaining('I didn’t send “what’s the status of this” to the agent'),
    ]);
  });

  it('send a thanks or a +1 with something to change, as the instruction it is', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const said = [
      'Nice, but also add an example for --json',
      '+1 and mention the flag in the FAQ',
      'Thanks! Now also document the --yaml flag',
      'any update to the FAQ?',
    ];
    for (const text of said) await h.event(reply(thread, text));
    await h.slack.waitForCalls('reactions.add', said.length);
    await h.bot.drained();
    expect(followUps(h).map((request) => request.body)).toEqual(said.map((prompt) => ({ prompt })));
  });

  it('answer “what’s the status?” with where to look, rather than send it to the job as an instruction', async () => {
    const h = await bot();
    const thread = await startJob(h);
    // Sent, it would reach the agent as an instruction (and set a finished job working again).
    await h.event(reply(thread, 'what’s the status?'));
    await h.bot.drained();
    expect(followUps(h).map((request) => request.body)).toEqual([]);
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(told.args.text)).toContain('/docs-agent status');
  });

  it('in a thread a person started, and no job’s, read nothing from Slack and answer nothing', async () => {
    const h = await bot();
    const root = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'Lunch at noon?' });
    // Slack names the parent's author: a person's thread is never a job card's, so it is not looked at.
    await h.event(reply(root.ts, 'Sure, and document the lunch API', { parent_user_id: 'U0ADA' }));
    await h.bot.drained();
    expect(h.slack.callsTo('conversations.replies')).toEqual([]);
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(followUps(h)).toEqual([]);
  });

  it('written one after the other reach the job in that order, even when the first is slower to read', async () => {
    const h = await bot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat' });
    const thread = await startJob(h);
    // The first names a person, whose name Slack is slow to give (a busy users.info): the second,
    // which builds on it, must not overtake it.
    h.slack.failNext('users.info', { delayMs: 800 });
    await h.event(reply(thread, 'Use the example <@U0CAT> wrote'));
    await h.event(reply(thread, 'but leave out its last line'));

    await expect.poll(() => followUps(h).length, { timeout: 10_000 }).toBe(2);
    expect(followUps(h).map((request) => request.body)).toEqual([
      { prompt: 'Use the example @cat wrote' },
      { prompt: 'but leave out its last line' },
    ]);
  });

  it('held back by an earlier reply still under way, goes back to the queue when the worker stops, and is sent once after', async () => {
    const namespace = uniqueNamespace('held-at-stop');
    const first = await bot({ namespace, stopGraceMs: 1_000 });
    const thread = await startJob(first);
    // An earlier reply of the thread was under way on a worker that died: its note holds later
    // replies back for 20 s from when it was made (11 s ago), well past the stop's grace (1 s).
    const { atomic } = first.bot.context.jobs.store;
    const underWay = `replies-under-way:C0DOCS:${thread}`;
    const earlierTs = reply(thread, 'lost').ts;
    await atomic.indexAdd(
      underWay,
      `${earlierTs}/${Date.now() - 11_000}`,
      Number(earlierTs),
      undefined,
      20_000,
    );
    await first.event(reply(thread, 'but leave out its last line'));
    await expect.poll(async () => (await atomic.indexAll(underWay)).length).toBe(2);

    // Stopped while the reply waits: it gives its job back within the grace, as any running work.
    await first.stopBot();
    expect(first.logs.join('\n')).not.toMatch(/ignored its abort signal/);
    expect(followUps(first)).toEqual([]);

    // The bot run again sends it, once.
    const again = await bot({ namespace, slack: first.slack, mintlify: first.mintlify });
    await expect.poll(() => followUps(again).length, { timeout: 20_000 }).toBe(1);
    expect(followUps(again)[0]?.body).toEqual({ prompt: 'but leave out its last line' });
  }, 40_000);

  it('a retried Slack event sends one follow-up, also across two instances sharing Redis', async () => {
    const namespace = uniqueNamespace('retry');
    const first = await bot({ namespace });
    const second = await bot({ namespace, slack: first.slack, mintlify: first.mintlify });
    const thread = await startJob(first);
    const event = reply(thread, 'Add an example');

    await Promise.all([
      first.event(event, { eventId: 'Ev0RETRY' }),
      second.event(event, { eventId: 'Ev0RETRY', retryNum: 1 }),
      first.event(event, { eventId: 'Ev0RETRY', retryNum: 2 }),
    ]);
    await first.slack.waitForCall('reactions.add');
    await Promise.all([first.bot.drained(), second.bot.drained()]);

    expect(followUps(first)).toHaveLength(1);
    expect(first.slack.callsTo('reactions.add')).toHaveLength(1);
  });

  it('with a file, or also sent to the channel, still steer the job', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const screenshot = {
      id: 'F0SHOT',
      name: 'flag.png',
      title: 'Screenshot of the flag',
      mimetype: 'image/png',
    };
    await h.event(
      reply(thread, 'See the screenshot: the flag is missing', {
        subtype: 'file_share',
        files: [screenshot],
      }),
    );
    await h.event(reply(thread, 'Everyone: this one matters', { subtype: 'thread_broadcast' }));
    await h.slack.waitForCalls('reactions.add', 2);
    // The agent cannot open Slack files: the file is named, as in a mention's thread context.
    expect(followUps(h).map((request) => request.body)).toEqual(
      expect.arrayContaining([
        { prompt: 'See the screenshot: the flag is missing\n[attached, not included: flag.png]' },
        { prompt: 'Everyone: this one matters' },
      ]),
    );
  });

  it('written with /me (a me_message, as Slack sends it), still steer the job, as the thread’s context counts it', async () => {
    const h = await bot();
    const thread = await startJob(h);
    // `/me also wants the --force flag covered`: Slack sends the words after /me, its subtype me_message.
    await h.event(reply(thread, 'also wants the --force flag covered', { subtype: 'me_message' }));
    await expect.poll(() => followUps(h)).toHaveLength(1);
    expect(String((followUps(h)[0]!.body as { prompt: string }).prompt)).toContain(
      'also wants the --force flag covered',
    );
  });

  it('from someone of another organization (Slack Connect) with a file alone, tell them the agent cannot open files', async () => {
    const h = await bot();
    const thread = await startJob(h);
    // In a shared channel Slack names no file shared by the other organization's people: the
    // message carries only its id, and a word to ask files.info for the rest.
    const shared = {
      id: 'F0SHOT',
      mode: 'file_access',
      file_access: 'check_file_info',
      created: 0,
      timestamp: 0,
      user: '',
    };
    await h.event(
      reply(thread, '', { subtype: 'file_share', files: [shared], user: 'U0EXT', user_team: 'T0PARTNER' }),
    );
    // As for a file of this organization's people: nothing sent, and its author told why.
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(told.args).toMatchObject({ channel: 'C0DOCS', user: 'U0EXT', thread_ts: thread });
    expect(String(told.args.text)).toContain('can’t open files');
    expect(followUps(h)).toEqual([]);
    // With words, it goes to the job, the file named as what it is.
    await h.event(
      reply(thread, 'The error in this screenshot', {
        subtype: 'file_share',
        files: [shared],
        user: 'U0EXT',
        user_team: 'T0PARTNER',
      }),
    );
    await expect
      .poll(() => followUps(h).map((request) => request.body))
      .toEqual([{ prompt: 'The error in this screenshot\n[attached, not included: a file]' }]);
  });

  it('with a message forwarded into the thread, send the forwarded message with the words typed with it', async () => {
    const h = await bot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat' });
    const thread = await startJob(h);
    // Slack keeps the forwarded message in an attachment marked is_share; the text is the comment.
    await h.event(
      reply(thread, 'Also cover this question', {
        attachments: [forwardedMessage('Does --dry-run still write the lock file?')],
      }),
    );
    await h.slack.waitForCall('reactions.add');
    const prompt = (followUps(h)[0]?.body as { prompt: string }).prompt;
    expect(prompt.split('\n')[0]).toBe('Also cover this question');
    expect(prompt).toContain('Forwarded message from @cat:\n  Does --dry-run still write the lock file?');
  });

  it('with a message forwarded into the thread and no words typed with it (or only a thanks), send the forwarded message', async () => {
    const h = await bot();
    h.slack.seedUser({ id: 'U0CAT', name: 'cat' });
    const thread = await startJob(h);
    // Forwarded under the card with nothing typed: the person means it for the job, as a comment would say.
    const forward = reply(thread, '', {
      attachments: [forwardedMessage('Does --dry-run still write the lock file?')],
    });
    await h.event(forward);
    await h.slack.waitForCall('reactions.add');
    expect(h.slack.message('C0DOCS', String(forward.ts))?.reactions?.map((r) => r.name)).toEqual([
      'white_check_mark',
    ]);
    // Said what it is, the forwarded words kept apart as context, as with a comment.
    const prompt = (followUps(h)[0]?.body as { prompt: string }).prompt;
    expect(prompt.split('\n')[0]).toBe(
      'Take into account the message below, forwarded into this job’s thread.',
    );
    expect(prompt).toContain('Forwarded message from @cat:\n  Does --dry-run still write the lock file?');
    // A thanks typed with it is only its comment, as with a file: the forwarded message is sent.
    await h.event(reply(thread, 'thanks!', { attachments: [forwardedMessage('Is the lock file v2 now?')] }));
    await h.slack.waitForCalls('reactions.add', 2);
    expect((followUps(h)[1]?.body as { prompt: string }).prompt).toContain('Is the lock file v2 now?');
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
  });

  it('with files and no words tell the author, once, and send nothing', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const event = reply(thread, '', { subtype: 'file_share', files: [{ id: 'F0ONLY', name: 'only.png' }] });
    await h.event(event);
    await h.event(event); // delivered twice (as a reply that also mentions the bot is)
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(told.args).toMatchObject({ channel: 'C0DOCS', user: 'U0BEA', thread_ts: thread });
    expect(String(told.args.text)).toContain('can’t open files');
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(followUps(h)).toEqual([]);
    expect(h.slack.callsTo('reactions.add')).toEqual([]);
  });

  it('answer a thanks with files as files alone, and `status` with where to type it, each to its author, sending nothing', async () => {
    const h = await bot();
    const thread = await startJob(h);
    await h.event(
      reply(thread, 'thanks!', { subtype: 'file_share', files: [{ id: 'F0SHOT', name: 'shot.png' }] }),
    );
    const files = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(files.args.text)).toContain('can’t open files');
    await h.event(reply(thread, 'status?'));
    const [, word] = await h.slack.waitForCalls('chat.postEphemeral', 2);
    expect(word?.args).toMatchObject({ channel: 'C0DOCS', user: 'U0BEA', thread_ts: thread });
    expect(String(word?.args.text)).toContain('type `/docs-agent status`');
    expect(String(word?.args.text)).toContain('I didn’t send “status” to the agent');
    await h.bot.drained();
    expect(followUps(h)).toEqual([]);
    expect(h.slack.callsTo('reactions.add')).toEqual([]);
  });

  it('reopen a finished job even when Redis misses its answer: recorded once Redis is back, and followed again', async () => {
    const h = await bot({ env: { ...FAST_POLL }, recordAgainEveryMs: 100 });
    const thread = await startJob(h);
    const { records } = h.bot.context.jobs;
    h.mintlify.setJob('job-1', { status: 'completed', prLink: 'https://github.com/acme/docs/pull/1' });
    await expect.poll(() => h.bot.following()).toBe(0); // finished: nothing follows it now

    // The first write after the follow-up reached Mintlify gets no answer from Redis.
    const update = records.update.bind(records);
    let missed = 0;
    vi.spyOn(records, 'update').mockImplementation(async (jobId, change) => {
      if (followUps(h).length > 0 && missed++ === 0) throw new StoreTimeoutError('an update', 5_000);
      return update(jobId, change);
    });
    await h.event(reply(thread, 'Also document --verbose'));
    await h.slack.waitForCall('reactions.add');
    await expect.poll(async () => (await records.get('job-1'))?.status).toBe('active');
    expect(missed).toBeGreaterThan(1);

    // Followed again: the new round's pull request is told in the thread.
    h.mintlify.setJob('job-1', { status: 'completed', prLink: 'https://github.com/acme/docs/pull/2' });
    await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === thread && String(call.args.text).includes('pull/2'),
    );
  });

  it('whose answer Redis never took by the stop: the log says the reopened job is not followed', async () => {
    const h = await bot({ recordAgainEveryMs: 60_000 }); // no try again before the stop
    const thread = await startJob(h);
    const { records } = h.bot.context.jobs;
    const update = records.update.bind(records);
    vi.spyOn(records, 'update').mockImplementation(async (jobId, change) => {
      if (followUps(h).length > 0) throw new StoreTimeoutError('an update', 5_000);
      return update(jobId, change);
    });
    await h.event(reply(thread, 'Also document --quiet'));
    await h.slack.waitForCall('reactions.add');

    await h.stopBot();
    expect(
      h.logs.filter((line) => line.includes('could not be recorded (the bot is stopping)')),
    ).toHaveLength(1);
  });

  it('a reply Mintlify never received (its connection refused), cut short by the bot stopping, is told as not sent and does not reopen the job', async () => {
    const mintlify = await startMintlifyFake({ apiKey: SECRETS.mintlifyKey, projectId: PROJECT_ID });
    const h = await bot({
      mintlify,
      // A wait before the retry that the stop's grace (1 s) ends (the bot's own: up to 30 s).
      mintlifyOptions: { retry: { baseDelayMs: 30_000, maxDelayMs: 30_000, maxElapsedMs: 600_000 } },
      stopGraceMs: 1_000,
    });
    const thread = await startJob(h);
    await completeJob(h);
    // Mintlify is out of reach: the follow-up's connection is refused, so it is never sent.
    await mintlify.close();
    const sends = vi.spyOn(h.bot.context.jobs.mintlify, 'sendMessage');
    vi.spyOn(Math, 'random').mockReturnValue(0.9);

    await h.event(reply(thread, 'Also add an example'));
    await expect.poll(() => sends.mock.calls.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500)); // refused; waiting before the retry
    await h.stopBot();
    vi.restoreAllMocks();

    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
    expect.soft(told).toEqual([expect.stringContaining('Nothing was sent')]);
    const store = await openStore(h.config.store, createLogger({ level: 'error', secrets: [] }), {
      retentionMs: h.config.jobRetentionMs,
    });
    try {
      const record = await new JobRecords(store, h.config.jobRetentionMs).get('job-1');
      // Not followed as if the job had taken it: that would say "Working on it" and tell its end again.
      expect(record?.status).toBe('completed');
    } finally {
      await store.close();
    }
  });

  it('tell the author when few agent uses are left this hour', async () => {
    const h = await bot();
    const thread = await startJob(h);
    const ledger = new RateLedger(h.bot.store);
    for (let i = 0; i < 97; i += 1) await ledger.recordUse('proj_test', `earlier-${i}`);
    await h.event(reply(thread, 'Add an example'));
    const note = await h.slack.waitForCall('chat.postEphemeral');
    expect(note.args).toMatchObject({ user: 'U0BEA', thread_ts: thread });
    expect(String(note.args.text)).toContain('1 agent use left this hour');
  });

  it('are sent even when the job looks finished: the service decides', async () => {
    const h = await bot();
    const thread = await startJob(h);
    await completeJob(h);
    await h.event(reply(thread, 'One more thing: fix the typo in the title'));
    await h.slack.waitForCall('reactions.add');
    expect(followUps(h)).toHaveLength(1);
    // The service reopened it: the card says so at once.
    const redrawn = await h.slack.waitForCall('chat.update', (call) => call.args.ts === thread);
    expect(JSON.stringify(redrawn.args.blocks)).toContain('Working on it');
  });

  it('whose answer is lost after Mintlify took it: the job it reopened is followed, as the author is told to watch the thread', async () => {
    const h = await bot({ env: FAST_POLL, followUpGraceMs: 0 });
    const thread = await startJob(h);
    const first = 'https://github.com/acme/docs/pull/7';
    const second = 'https://github.com/acme/docs/pull/8';
    const saidInThread = (link: string) =>
      h.slack
        .callsTo('chat.postMessage')
        .some((call) => call.args.thread_ts === thread && String(call.args.text).includes(link));
    h.mintlify.setJob('job-1', { status: 'completed', prLink: first });
    await expect.poll(() => saidInThread(first), { timeout: 10_000 }).toBe(true);
    await expect.poll(async () => (await h.bot.context.jobs.records.get('job-1'))?.status).toBe('completed');

    // Mintlify takes the follow-up (the job works again), then the connection drops before its answer.
    h.mintlify.injectFault('sendMessage', { destroySocket: true });
    await h.event(reply(thread, 'Add an example'));
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(told.args.text)).toContain('watch this thread');
    expect(h.mintlify.jobs.get('job-1')?.status).toBe('active');

    // The round it started ends with a second pull request: the thread (or at least the card) says so.
    h.mintlify.setJob('job-1', { status: 'completed', prLink: second });
    const cardShows = (link: string) =>
      h.slack
        .callsTo('chat.update')
        .some((call) => call.args.ts === thread && JSON.stringify(call.args).includes(link));
    await expect.poll(() => saidInThread(second) || cardShows(second), { timeout: 10_000 }).toBe(true);
  });

  it('refused by Mintlify with a 4xx the spec does not list (422): told as refused, and the finished job is not reopened nor its end told again', async () => {
    const h = await bot({ env: FAST_POLL, followUpGraceMs: 0 });
    const thread = await startJob(h);
    const prLink = 'https://github.com/acme/docs/pull/7';
    const ends = () =>
      h.slack
        .callsTo('chat.postMessage')
        .filter((call) => call.args.thread_ts === thread && String(call.args.text).includes('is done'));
    h.mintlify.setJob('job-1', { status: 'completed', prLink });
    await expect.poll(() => ends().length, { timeout: 10_000 }).toBe(1);
    await expect.poll(async () => (await h.bot.context.jobs.records.get('job-1'))?.status).toBe('completed');

    // A job still working, whose reads show the follower at work.
    await startJob(h, 'C0SENTINEL');
    const endedReads = getJobRequests(h, 'job-1').length;

    h.mintlify.injectFault('sendMessage', { status: 422, body: { error: 'prompt is too long' } });
    await h.event(reply(thread, 'Add an example'));
    const told = String((await h.slack.waitForCall('chat.postEphemeral')).args.text);
    // Several rounds of checks later, job-1 was not followed again.
    const reads = getJobRequests(h, 'job-2').length;
    await expect
      .poll(() => getJobRequests(h, 'job-2').length, { timeout: 10_000 })
      .toBeGreaterThan(reads + 5);
    expect(getJobRequests(h, 'job-1')).toHaveLength(endedReads);
    expect.soft(told).toContain('prompt is too long');
    expect.soft(told).not.toContain('may have received it anyway');
    expect.soft(ends()).toHaveLength(1);
    expect((await h.bot.context.jobs.records.get('job-1'))?.status).toBe('completed');
  });

  it('keep the pull request and branch Mintlify named before, when a later round answers none', async () => {
    const h = await bot({ env: { ...FAST_POLL, PREVIEWS: 'on' }, followUpGraceMs: 0 });
    const thread = await startJob(h);
    const prLink = 'https://github.com/acme/docs/pull/7';
    const ends = () =>
      h.slack
        .callsTo('chat.postMessage')
        .filter((call) => call.args.thread_ts === thread && String(call.args.text).includes('is done'));
    h.mintlify.setJob('job-1', { status: 'completed', prLink });
    await expect.poll(() => ends().length, { timeout: 10_000 }).toBe(1);

    // A reply reopens it; the new round ends with no pull request and no branch in Mintlify's answer
    // (the spec: null "if no files were changed"). The pull request of the round before still stands.
    await h.event(reply(thread, 'Add an example'));
    await h.slack.waitForCall('reactions.add');
    h.mintlify.setJob('job-1', { status: 'completed', prLink: null, source: { ref: null } });
    await expect.poll(() => ends().length, { timeout: 10_000 }).toBe(2);
    expect(String(ends()[1]?.args.text)).toContain(prLink);
    // The round's end is told to whoever steered it, with the requester; the first round's to the requester alone.
    expect(String(ends()[0]?.args.text)).toMatch(/^<@U0USER> :white/);
    expect(String(ends()[1]?.args.text)).toMatch(/^<@U0USER> <@U0BEA> :white/);
    await expect
      .poll(() => h.bot.context.jobs.records.get('job-1'))
      .toMatchObject({ status: 'completed', prLink, ref: 'mintlify/job-1' });
  });

  it('answer a failure to the author alone, in the thread', async () => {
    const h = await bot();
    const thread = await startJob(h);

    h.mintlify.injectFault('sendMessage', { status: 429, retryAfter: '120' });
    await h.event(reply(thread, 'Add an example'));
    const limited = await h.slack.waitForCall('chat.postEphemeral');
    expect(limited.args).toMatchObject({ channel: 'C0DOCS', user: 'U0BEA', thread_ts: thread });
    expect(String(limited.args.text)).toContain('Try again in 2 minutes');

    h.mintlify.injectFault('sendMessage', { status: 404 });
    await h.event(reply(thread, 'Add another example'));
    const gone = await h.slack.waitForCalls('chat.postEphemeral', 2);
    expect(String(gone[1]?.args.text)).toContain('no longer knows this job');
    expect(String(gone[1]?.args.text)).toContain('/docs-agent &lt;instruction&gt;');

    h.mintlify.injectFault('sendMessage', { status: 503 });
    await h.event(reply(thread, 'And a third'));
    const down = await h.slack.waitForCalls('chat.postEphemeral', 3);
    expect(String(down[2]?.args.text)).toContain('Mintlify had a problem');
    expect(h.slack.callsTo('reactions.add')).toHaveLength(0);
  });

  it('from someone outside the allowlist get a polite refusal, and nothing is sent', async () => {
    const h = await bot({ env: { ALLOWED_USER_IDS: 'U0USER' } });
    const thread = await startJob(h);
    await h.event(reply(thread, 'Add an example', { user: 'U0EVE' }));
    const refusal = await h.slack.waitForCall('chat.postEphemeral');
    expect(refusal.args).toMatchObject({ user: 'U0EVE', thread_ts: thread });
    expect(followUps(h)).toHaveLength(0);
  });

  it('from someone outside the allowlist, mentioning the bot, are refused once although Slack delivers them twice', async () => {
    const h = await bot({ env: { ALLOWED_USER_IDS: 'U0USER' } });
    const thread = await startJob(h);
    // A reply that mentions the bot comes as a message and as a mention.
    const event = reply(thread, '<@U0BOT> Add an example', { user: 'U0EVE' });
    await h.event(event);
    await h.bot.drained();
    await h.event({ ...event, type: 'app_mention' });
    const refusal = await h.slack.waitForCall('chat.postEphemeral');
    expect(refusal.args).toMatchObject({ user: 'U0EVE', thread_ts: thread });
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(followUps(h)).toHaveLength(0);
  });

  it('in a channel ALLOWED_CHANNEL_IDS no longer lists get a polite refusal, and nothing is sent', async () => {
    const namespace = uniqueNamespace('channels');
    const before = await bot({ namespace });
    const thread = await startJob(before);
    await before.stopBot();

    // Restarted enabled in another channel only: the job's thread is in one it no longer serves.
    const after = await bot({
      namespace,
      slack: before.slack,
      mintlify: before.mintlify,
      env: { ALLOWED_CHANNEL_IDS: 'C0ENG' },
    });
    await after.event(reply(thread, 'Add an example'));
    const refusal = await after.slack.waitForCall('chat.postEphemeral');
    expect(refusal.args).toMatchObject({ channel: 'C0DOCS', user: 'U0BEA', thread_ts: thread });
    expect(String(refusal.args.text)).toContain('isn’t enabled in this channel');
    await after.bot.drained();
    expect(followUps(after)).toHaveLength(0);
  });

  it('still reach the job after a restart, because the thread-to-job mapping lives in Redis', async () => {
    const namespace = uniqueNamespace('restart');
    const before = await bot({ namespace });
    const thread = await startJob(before);
    await before.stopBot();

    const after = await bot({ namespace, slack: before.slack, mintlify: before.mintlify });
    await after.event(reply(thread, 'Add an example'));
    await after.slack.waitForCall('reactions.add');
    expect(followUps(after).map((request) => request.path)).toEqual([
      '/v2/agent/proj_test/job/job-1/message',
    ]);
  });
});
