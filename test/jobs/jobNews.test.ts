import { describe, expect, it } from 'vitest';
import { failureWithInstruction, followedHereText } from '../../src/jobs/doorAnswers.js';
import { jobCard } from '../../src/jobs/jobCard.js';
import { channelJobList, jobLinks, personJobList } from '../../src/jobs/jobList.js';
import { jobNewsText, pullRequestLink, strayJobNewsText } from '../../src/jobs/jobNews.js';
import {
  applyAgentJob,
  applyFollowUpAnswer,
  followUpNotTakenUp,
  type JobRecord,
} from '../../src/jobs/jobRecord.js';
import { blockProblems, messageBlockLimit } from '../fakes/slack/blockKitLimits.js';

const record = (changes: Partial<JobRecord> = {}): JobRecord => ({
  jobId: 'job-1',
  projectId: 'proj',
  channel: 'C1',
  threadTs: '1.000100',
  cardTs: '1.000100',
  requestedBy: 'U1',
  prompt: 'Document <!channel> & the flag',
  door: 'command',
  status: 'completed',
  prLink: null,
  repository: null,
  ref: null,
  model: null,
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:00.000Z',
  finishedAt: null,
  round: 0,
  announced: [],
  ...changes,
});
const when = { now: new Date('2025-01-02T06:00:00Z'), activeSince: new Date('2025-01-01T00:00:00Z') };

describe('the news a job thread gets', () => {
  it('mentions nobody in the bot’s DM under the person’s own message, but does under a card moved there', () => {
    const pr = 'https://github.com/acme/docs/pull/42';
    const underTheirs = { channel: 'D0ADA', threadTs: '1.000100', cardTs: '1.000200', prLink: pr };
    expect(jobNewsText('completed', record(underTheirs), when)).toMatch(
      /^:white_check_mark: The docs agent is done/,
    );
    expect(jobNewsText('slow', record({ ...underTheirs, status: 'active' }), when)).toMatch(/^:hourglass: /);
    // A job whose channel would not take its card: the thread is the bot's card's, and only a mention notifies.
    const moved = { channel: 'D0ADA', threadTs: '1.000200', cardTs: '1.000200', prLink: pr };
    expect(jobNewsText('completed', record(moved), when)).toMatch(/^<@U1> :white_check_mark:/);
  });

  it('mentions a requester who steered their own job once, with the others who steered it', () => {
    const pr = 'https://github.com/acme/docs/pull/42';
    const steered = record({ prLink: pr, round: 1, steeredBy: ['U1', 'U2'] });
    const text = jobNewsText('completed', steered, when);
    expect(text).toMatch(/^<@U1> <@U2> :white_check_mark: The docs agent is done with the latest replies/);
    expect(text.split('<@U1>')).toHaveLength(2);
    expect(jobNewsText('failed', { ...steered, status: 'failed' }, when)).toMatch(/^<@U1> <@U2> :x: /);
  });

  it('tells how to start again where the job lives: a command in a channel, a message in the bot’s DM', () => {
    expect(jobNewsText('failed', record({ status: 'failed' }), when)).toContain(
      'start a new one with `/docs-agent &lt;instruction&gt;`',
    );
    const inDm = record({ status: 'failed', channel: 'D0ADA', cardTs: '1.000200' });
    expect(jobNewsText('failed', inDm, when)).toContain(
      'start a new one with a new message to me, outside any job’s thread',
    );
    expect(jobNewsText('gone', inDm, when)).not.toContain('/docs-agent');
  });

  it('says why a card was posted in the DM: not a member of a channel, a channel Slack does not let it post in, or a DM between people', () => {
    expect(followedHereText('C0DOCS')).toContain('`/invite @docs-agent` there');
    // Where Slack lets no app post (an announcement-only channel), the bot is likely a member already.
    expect(followedHereText('C0DOCS', true)).toMatch(/^Slack doesn’t let me post in <#C0DOCS>/);
    expect(followedHereText('C0DOCS', true)).not.toContain('/invite');
    expect(followedHereText('D0PEOPLE')).toMatch(
      /^I can’t post in a direct message between other people \(no app can be added to one\), so/,
    );
    expect(followedHereText('D0PEOPLE')).not.toContain('/invite');
  });

  it('names who asked for each job in a channel’s list, not in a person’s own', () => {
    const lines = (list: { blocks: unknown[] }) => JSON.stringify(list.blocks);
    expect(lines(channelJobList([record()]))).toContain('by <@U1>');
    expect(lines(personJobList([record()]))).not.toContain('<@U1>');
    expect(lines(personJobList([record()]))).toContain('Document &lt;!channel&gt; &amp; the flag');
  });

  it('says a later round’s end in words of its own, not the first round’s again', () => {
    const pr = 'https://github.com/acme/docs/pull/42';
    expect(jobNewsText('completed', record({ prLink: pr }), when)).toContain(
      'The docs agent is done: pull request <https://github.com/acme/docs/pull/42|acme/docs#42> is ready for review.',
    );
    expect(jobNewsText('completed', record({ prLink: pr, round: 1 }), when)).toContain(
      'The docs agent is done with the latest replies: pull request <https://github.com/acme/docs/pull/42|acme/docs#42> is ready for review.',
    );
  });

  it('says a later round’s failure, or its end with no change, in words of its own too, not the first round’s again', () => {
    // A reply to a failed job that fails again, or to a job that changed nothing that changes nothing
    // again: the thread would show the very same message twice, which reads as a repeat.
    for (const [kind, changes] of [
      ['failed', { status: 'failed' }],
      ['completed', { status: 'completed' }],
    ] as const) {
      const first = jobNewsText(kind, record(changes), when);
      const later = jobNewsText(
        kind,
        record({ ...changes, round: 1, roundStartedAt: '2025-01-02T05:00:00.000Z' }),
        when,
      );
      expect(later, kind).not.toBe(first);
    }
  });

  it('links a GitHub pull request by its short name and mentions the requester', () => {
    const text = jobNewsText('completed', record({ prLink: 'https://github.com/acme/docs/pull/42' }), when);
    expect(text).toContain('<@U1>');
    expect(text).toContain('<https://github.com/acme/docs/pull/42|acme/docs#42>');
  });

  it('never lets a pull request link break out of its brackets', () => {
    const text = jobNewsText('completed', record({ prLink: 'https://git.example/pr/1|<!channel>' }), when);
    expect(text).toContain('<https://git.example/pr/1%7C%3C!channel%3E|the pull request>');
    expect(text).not.toContain('<!channel>');
  });

  it('labels any other pull request link shortly, and shows one too long to link as text', () => {
    expect(pullRequestLink('https://gitlab.example/acme/docs/-/merge_requests/7')).toBe(
      '<https://gitlab.example/acme/docs/-/merge_requests/7|acme/docs!7>',
    );
    expect(pullRequestLink('https://github.acme.example/acme/docs/pull/7')).toBe(
      '<https://github.acme.example/acme/docs/pull/7|acme/docs#7>',
    );
    expect(pullRequestLink('https://bitbucket.org/acme/docs/pull-requests/7')).toBe(
      '<https://bitbucket.org/acme/docs/pull-requests/7|pull request>',
    );
    const long = `https://git.example/pr/7?${'x'.repeat(2_000)}`;
    expect(pullRequestLink(long)).toMatch(/^`https:\/\/git\.example\/pr\/7\?x+…`$/);
    // A GitHub one too: a line cut to Slack's 3,000 characters never cuts a link in half.
    const github = `https://github.com/acme/docs/pull/42?${'x'.repeat(2_950)}`;
    expect(pullRequestLink(github)).toMatch(/^`https:\/\/github\.com\/acme\/docs\/pull\/42\?x+…`$/);
  });

  it('names a pull request that is not on github.com once, not as “pull request pull request”', () => {
    // As Slack shows it: a `<url|label>` link reads as its label.
    const shown = (text: string) => text.replace(/<([^|>]+)\|([^>]+)>/g, '$2');
    for (const prLink of [
      'https://gitlab.com/acme/docs/-/merge_requests/7',
      'https://github.acme.example/acme/docs/pull/7', // GitHub Enterprise
      'https://bitbucket.org/acme/docs/pull-requests/7', // no short name
    ]) {
      const completed = shown(jobNewsText('completed', record({ prLink }), when));
      expect(completed).not.toMatch(/pull request pull request/);
      const again = shown(jobNewsText('completed', record({ prLink, round: 1 }), when));
      expect(again).not.toMatch(/pull request pull request/);
      const archived = shown(jobNewsText('archived', record({ prLink, status: 'archived' }), when));
      expect(archived).toMatch(
        /Its work so far is in (the pull request|merge request acme\/docs!7|pull request acme\/docs#7)\./,
      );
    }
  });

  it('says how long a slow job has run', () => {
    expect(jobNewsText('slow', record({ status: 'active' }), when)).toContain('30 h');
  });

  it('escapes the prompt when the news stands on its own', () => {
    const text = strayJobNewsText(record(), 'done');
    expect(text).toContain('&lt;!channel&gt; &amp; the flag');
    expect(text).toContain('`job-1`');
  });
});

describe('the job card’s buttons', () => {
  const buttonsOf = (card: ReturnType<typeof jobCard>) =>
    card.blocks.flatMap((block) =>
      block.type === 'actions' ? block.elements.map((element) => (element as { url?: string }).url) : [],
    );
  const deployed = {
    round: 0,
    branch: 'mintlify/job-1',
    state: 'success' as const,
    askedAt: '2025-01-01T00:00:00.000Z',
    statusId: 'status-1',
    url: 'https://acme-mintlify-job-1.mintlify.app',
  };

  it('keep the preview’s button when the pull request’s link cannot be one', () => {
    const long = `https://github.com/acme/docs/pull/42?${'x'.repeat(3_000)}`;
    const card = jobCard(record({ prLink: long, ref: 'mintlify/job-1', preview: deployed }));
    expect(buttonsOf(card)).toEqual([deployed.url]);
    expect(JSON.stringify(card.blocks)).toContain('pull request https://github.com/acme/docs/pull/42?');
  });

  it('are listed as links only when short enough for a line of text', () => {
    const long = { ...deployed, url: `https://acme.mintlify.app/${' |'.repeat(1_400)}` };
    expect(jobLinks(record({ preview: deployed }))).toContain(`<${deployed.url}|preview>`);
    expect(jobLinks(record({ preview: long })).join(' ')).not.toContain('preview');
  });

  it('show both when both links can be buttons', () => {
    const pr = 'https://github.com/acme/docs/pull/42';
    const card = jobCard(record({ prLink: pr, ref: 'mintlify/job-1', preview: deployed }));
    expect(buttonsOf(card)).toEqual([pr, deployed.url]);
  });
});

describe('job cards', () => {
  const shown = (card: ReturnType<typeof jobCard>) => JSON.stringify(card.blocks);

  it('show the instruction as written: Slack is told to parse no `@channel` or bare link in it, on the card and in the job list', () => {
    const asked = record({ prompt: '@channel see https://example.com/x' });
    const texts = [...jobCard(asked).blocks, ...channelJobList([asked]).blocks].flatMap((block) =>
      block.type === 'section' && block.text ? [block.text] : [],
    );
    const withPrompt = texts.filter((text) => text.text.includes('@channel see https://example.com/x'));
    expect(withPrompt).toHaveLength(2);
    for (const text of withPrompt) expect(text).toMatchObject({ type: 'mrkdwn', verbatim: true });
    // Mintlify's words too: a pull request link shown as text, a preview's failure.
    const mintlifys = jobCard(
      record({
        prLink: 'ftp://git.example/@here',
        preview: {
          round: 0,
          branch: 'fix-@here',
          state: 'failure',
          summary: 'see @here',
          askedAt: '2025-01-01T00:00:00.000Z',
        },
      }),
    ).blocks.flatMap((block) => (block.type === 'context' ? block.elements : []));
    const withHere = mintlifys.filter((element) => 'text' in element && element.text.includes('@here'));
    expect(withHere).toHaveLength(2);
    for (const element of withHere) expect(element).toMatchObject({ type: 'mrkdwn', verbatim: true });
  });

  it('stay within Slack’s limits with the longest branch name and instruction, and never cut an emoji or an entity in half', () => {
    const preview = { round: 0, branch: '&<'.repeat(700), askedAt: '2025-01-01T00:00:00.000Z' };
    for (const state of ['asked', 'in_progress', 'failure'] as const) {
      const card = jobCard(
        record({ status: 'completed', ref: 'x', preview: { ...preview, state, summary: '&'.repeat(400) } }),
      );
      expect(blockProblems(card.blocks, '/blocks', messageBlockLimit)).toEqual([]);
      // Cut before it is escaped: no `&amp;` is cut in half.
      expect(shown(card)).not.toMatch(/&(a|am|l)?…/);
    }
    // The longest instruction a record keeps, all ampersands: the quote ends whole, no `&amp;` cut in half.
    const ampersands = jobCard(record({ prompt: '&'.repeat(600) }));
    expect(blockProblems(ampersands.blocks, '/blocks', messageBlockLimit)).toEqual([]);
    expect(shown(ampersands)).not.toMatch(/&[a-z]*…/);
    const card = jobCard(record({ prompt: '😀'.repeat(600) }));
    expect(blockProblems(card.blocks, '/blocks', messageBlockLimit)).toEqual([]);
    for (const text of [card.text, ...card.blocks.map((block) => JSON.stringify(block))]) {
      expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
      expect(text).not.toMatch(/\\ud83d(?!\\ude00)/);
    }
  });

  it('say how long ago the job started only in Slack’s own date, which stays current between edits', () => {
    const card = jobCard(record({ status: 'active', finishedAt: null }));
    expect(shown(card)).toMatch(/started <!date\^\d+\^\{ago\}\|2025-01-01T00:00:00Z> {2}·/);
  });

  it('count a reopened job’s time from its reopening, not from its first start days before', () => {
    const reopened = applyFollowUpAnswer(
      record({ status: 'completed', finishedAt: '2025-01-01T00:05:00.000Z' }),
      { id: 'job-1', status: 'completed' },
      new Date('2025-01-04T10:00:00Z'),
    );
    expect(shown(jobCard(reopened))).toMatch(/reopened <!date\^\d+\^\{ago\}\|2025-01-04T10:00:00Z>/);
    const done = applyAgentJob(reopened, { status: 'completed' }, new Date('2025-01-04T10:07:00Z'));
    expect(shown(jobCard(done))).toContain('took 7 min');
  });

  it('list a job as Mintlify last answered while Slack is still told of it, and drop that once a later answer or a reply comes', () => {
    const pr = 'https://github.com/acme/docs/pull/9';
    const read = record({ status: 'active', lastRead: { status: 'completed', prLink: pr } });
    expect(channelJobList([read]).blocks[1]).toMatchObject({
      text: { text: expect.stringContaining('Pull request ready') },
    });
    expect(channelJobList([read]).blocks[1]).toMatchObject({ text: { text: expect.stringContaining(pr) } });
    // The record's own answer once Slack took everything, or a reply that sets the job working again.
    expect(applyAgentJob(read, { status: 'completed', prLink: pr }, when.now).lastRead).toBeUndefined();
    const replied = applyFollowUpAnswer(read, { status: 'active' }, when.now, 'U2');
    expect(replied.lastRead).toBeUndefined();
    expect(channelJobList([replied]).blocks[1]).toMatchObject({
      text: { text: expect.stringContaining('Working on it') },
    });
  });

  it('say how long a long job took in whole hours and the minutes left over', () => {
    const tookMinutes = (minutes: number) => {
      const finishedAt = new Date(Date.parse('2025-01-01T00:00:00Z') + minutes * 60_000).toISOString();
      return shown(jobCard(record({ createdAt: '2025-01-01T00:00:00.000Z', finishedAt })));
    };
    expect(tookMinutes(90)).toContain('took 1 h 30 min');
    expect(tookMinutes(120)).toContain('took 2 h');
    expect(tookMinutes(155)).toContain('took 2 h 35 min');
  });

  it('hold a reply’s round open while Mintlify still answers the old end, also with no pull request in the answer', () => {
    const pr = 'https://github.com/acme/docs/pull/7';
    const sent = new Date('2025-01-04T10:00:00Z');
    const reopened = applyFollowUpAnswer(
      record({ status: 'completed', prLink: pr, finishedAt: '2025-01-01T00:05:00.000Z' }),
      { id: 'job-1', status: 'completed', prLink: null },
      sent,
    );
    const soon = new Date('2025-01-04T10:00:10Z');
    expect(followUpNotTakenUp(reopened, { status: 'completed', prLink: null }, soon, 120_000)).toBe(true);
    expect(followUpNotTakenUp(reopened, { status: 'completed', prLink: pr }, soon, 120_000)).toBe(true);
    expect(followUpNotTakenUp(reopened, { status: 'completed', prLink: `${pr}0` }, soon, 120_000)).toBe(
      false,
    );
  });

  it('show a status Mintlify added after this version as Mintlify gives it, until it answers a known one', () => {
    const active = record({ status: 'active' });
    const odd = applyAgentJob(
      active,
      { unrecognizedStatus: 'cancelled <b>' },
      new Date('2025-01-02T00:00:00Z'),
    );
    expect(odd.status).toBe('active');
    expect(shown(jobCard(odd))).toContain('Mintlify says “cancelled &lt;b&gt;”');
    const done = applyAgentJob(odd, { status: 'completed' }, new Date('2025-01-02T00:01:00Z'));
    expect(done.reportedStatus).toBeUndefined();
    expect(shown(jobCard(done))).toContain('Done, no changes needed');
    // A finished job keeps its end, whatever Mintlify answers after it.
    const after = applyAgentJob(done, { unrecognizedStatus: 'cancelled' }, new Date('2025-01-02T00:02:00Z'));
    expect(shown(jobCard(after))).toContain('Done, no changes needed');
  });

  it('are no longer gone once Mintlify answers for the job again', () => {
    const gone = record({ status: 'active', goneAt: '2025-01-02T00:00:00.000Z' });
    expect(shown(jobCard(gone))).toContain('Gone from Mintlify');
    const back = applyAgentJob(gone, { status: 'active' }, new Date('2025-01-02T00:01:00Z'));
    expect(back.goneAt).toBeUndefined();
    expect(shown(jobCard(back))).toContain('Working on it');
  });

  it('say that a reply steers the job while it works, and still reaches the agent once it is finished', () => {
    expect(shown(jobCard(record({ status: 'active' })))).toContain('Reply in this thread to steer the job.');
    for (const status of ['completed', 'failed', 'archived'] as const) {
      const card = shown(jobCard(record({ status, finishedAt: '2025-01-01T00:05:00.000Z' })));
      // Only a completed job is known to take a reply up again (Mintlify does not say for the others).
      expect(card).toContain(
        status === 'completed'
          ? 'Replies in this thread go to the agent and set it working again (one that is only a thanks or an OK is not sent).'
          : 'Replies in this thread still go to the agent. Start',
      );
      expect(card).toContain('Start a reply with `//` to keep it between people.');
    }
  });
});

describe('two follow-ups sent before the agent took up the first', () => {
  it('are one round, and its end is told to both people who steered it', () => {
    const PR = 'https://github.com/acme/docs/pull/7';
    const finished = record({
      prLink: PR,
      ref: 'mintlify/job-1',
      finishedAt: '2025-01-01T00:05:00.000Z',
      announced: ['0:completed'],
    });
    // Mintlify still answers the old end to both (the agent takes messages up in the background).
    const oldEnd = { id: 'job-1', status: 'completed' as const, prLink: PR };
    const first = applyFollowUpAnswer(finished, oldEnd, new Date('2025-01-02T10:00:00Z'), 'U2');
    const second = applyFollowUpAnswer(first, oldEnd, new Date('2025-01-02T10:00:20Z'), 'U3');
    const done = applyAgentJob(second, { status: 'completed', prLink: PR }, new Date('2025-01-02T10:09:00Z'));
    // Both replies steer the same reopened round: U2 must still be told when it ends.
    expect(done.steeredBy).toEqual(['U2', 'U3']);
    expect(done.round).toBe(1);
  });
});

describe('a reply that reopens a job', () => {
  const PR = 'https://github.com/acme/docs/pull/7';
  const oldEnd = { id: 'job-1', status: 'completed' as const, prLink: PR };
  const at = new Date('2025-01-02T10:00:00Z');

  it('opens a round told to its author alone when the round before was told of its end', () => {
    const told = record({ prLink: PR, steeredBy: ['U2'], announced: ['0:completed'] });
    expect(applyFollowUpAnswer(told, oldEnd, at, 'U3')).toMatchObject({ round: 1, steeredBy: ['U3'] });
  });

  it('carries whoever steered the round before into its round when that round’s end was never told', () => {
    // Still active on the record: the end Mintlify answered the reply with never reached the thread.
    const untold = record({ status: 'active', steeredBy: ['U2'] });
    expect(applyFollowUpAnswer(untold, oldEnd, at, 'U3')).toMatchObject({
      round: 1,
      steeredBy: ['U2', 'U3'],
    });
    // Its post under way is as good as told: it names them already.
    const posting = record({ status: 'active', steeredBy: ['U2'], noticesInFlight: { '0:completed': '' } });
    expect(applyFollowUpAnswer(posting, oldEnd, at, 'U3')).toMatchObject({ round: 1, steeredBy: ['U3'] });
  });
});

describe('a person’s instruction inside the bot’s own sentences', () => {
  it('cannot turn the rest of the bot’s line around with a bidirectional override', () => {
    // U+202E (right-to-left override), never closed: Slack, like any Unicode text view, shows what follows reversed.
    const spoof = record({ prompt: 'Fix the typo \u202E', prLink: 'https://github.com/acme/docs/pull/7' });
    const news = strayJobNewsText(spoof, jobNewsText('completed', spoof, when));
    // The override is the person's; the bot's words after it (who is mentioned, which pull request) are not.
    expect(news.slice(news.indexOf('\u202E'))).not.toMatch(/\u202E[^\u202C\n]*pull request/);
  });
});

describe('an instruction given back when its job could not be started', () => {
  it('is given back whole, up to the longest instruction the form takes (3,000 characters)', () => {
    // The form's input allows 3,000 characters (shortcutModal's max_length); Slack keeps the text nowhere else.
    const words = 'Document the retry flag, its default and its limits. ';
    const instruction = `${words.repeat(60)}`.slice(0, 2_990) + 'LAST WORDS';
    expect(instruction.length).toBe(3_000);
    const text = failureWithInstruction('Mintlify did not answer.', instruction);
    expect(text).toContain('LAST WORDS');
  });
});
