import { Cron } from 'croner';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { publishHome, type ShownHomes } from '../../src/home/publishHome.js';
import type { SlackCall } from '../fakes/slackFake.js';
import { heldStep } from '../support/leases.js';
import { type BotHarness, PROJECT_ID, startBot } from '../support/botHarness.js';

let h: BotHarness;
afterEach(async () => h?.close());

const FAST_POLL = { POLL_INTERVAL_MS: '100', POLL_MAX_INTERVAL_MS: '200', POLL_SLOW_INTERVAL_MS: '300' };
const PR = 'https://github.com/acme/docs/pull/42';
/** How far apart the Home tab's refreshes are at least, where a test sets it (the bot's: 3 s). */
const REFRESH_MIN_INTERVAL_MS = 300;
const shown = (call: SlackCall) => JSON.stringify(call.args.view);
const openHome = (h: BotHarness, user: string, tab = 'home') =>
  h.event({ type: 'app_home_opened', user, channel: 'D0HOME', tab, event_ts: '1800000000.000100' });

/** Opens the person's Home tab; what Slack was asked to show them from then on. */
async function openedHome(h: BotHarness, user: string): Promise<string> {
  const openedAt = Date.now();
  await openHome(h, user);
  return shown(
    await h.slack.waitForCall('views.publish', (call) => call.args.user_id === user && call.at >= openedAt),
  );
}

async function startJobAs(h: BotHarness, user: string, text: string) {
  const before = h.slack.callsTo('chat.postMessage').length;
  await h.command(text, { user_id: user, channel_id: 'C0DOCS' });
  await h.slack.waitForCalls('chat.postMessage', before + 1);
  await h.bot.drained();
}

describe('the Home tab', () => {
  it('shows the person’s recent jobs, the agent budget, the digest and how to use the bot', async () => {
    // A time zone other than the machine's: the next digest is due at 09:00 there.
    h = await startBot({
      env: { DIGEST_CHANNEL: 'C0DIGEST', DIGEST_CRON: '0 9 * * 1', DIGEST_TIMEZONE: 'America/New_York' },
    });
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    // A new job shows on its requester's Home tab without waiting for the next visit.
    const refreshed = await h.slack.waitForCall('views.publish', (call) => call.args.user_id === 'U0ADA');
    expect(shown(refreshed)).toContain('Document the export flag');
    await startJobAs(h, 'U0BEA', 'Someone else’s job');
    const openedAt = Date.now();
    await openHome(h, 'U0ADA');

    const published = await h.slack.waitForCall(
      'views.publish',
      (call) => call.args.user_id === 'U0ADA' && call.at >= openedAt,
    );
    expect(published.response.ok).toBe(true);
    const home = shown(published);
    expect(home).toContain('Document the export flag');
    expect(home).toContain('Working on it');
    expect(home).toContain('https://slack.com/archives/C0DOCS/p');
    expect(home).not.toContain('Someone else');
    expect(home).toContain('98 of 100 agent uses');
    expect(home).toContain('<#C0DIGEST>');
    // When the next one is due, as a date Slack shows in the reader's time zone; not the cron pattern.
    const due = new Cron('0 9 * * 1', { timezone: h.config.digest.timezone }).nextRun() as Date;
    expect(home).toContain(`is posted in <#C0DIGEST>; the next is due <!date^${due.getTime() / 1000}^`);
    expect(home).not.toContain('0 9 * * 1');
    expect(home).toContain('How to use the docs agent');
    // Not the help message's words: the Home tab is no channel, and no answer to `help`.
    expect(home).not.toContain('this message');
    expect(home).not.toContain('this channel');
  });

  it('lists the person’s ten most recent jobs, newest first', async () => {
    h = await startBot();
    for (let i = 1; i <= 11; i += 1)
      await startJobAs(h, 'U0ADA', `Document flag-${String(i).padStart(2, '0')}`);
    const home = await openedHome(h, 'U0ADA');
    const listed = [...home.matchAll(/flag-(\d\d)/g)].map((match) => match[1]);
    expect([...new Set(listed)]).toEqual(['11', '10', '09', '08', '07', '06', '05', '04', '03', '02']);
  });

  it('with the hour’s agent uses spent, says when the next one frees up; with some left, when the count goes back up', async () => {
    h = await startBot();
    const { ledger } = h.bot.context.jobs;
    for (let i = 0; i < 99; i += 1) await ledger.recordUse(PROJECT_ID, `earlier-${i}`);
    const someLeft = await openedHome(h, 'U0ADA');
    expect(someLeft).toContain('1 of 100 agent uses');
    expect(someLeft).toContain('The count goes back up from <!date^');
    expect(someLeft).not.toContain('The next use frees up');

    await ledger.recordUse(PROJECT_ID, 'earlier-99');
    const spent = await openedHome(h, 'U0BEA');
    expect(spent).toContain('0 of 100 agent uses');
    expect(spent).toContain('The next use frees up at <!date^');
    expect(spent).not.toContain('The count goes back up');

    // More uses than Mintlify allows in the bot's rolling hour (Mintlify's own hour is not the bot's):
    // still none left, never fewer.
    await ledger.recordUse(PROJECT_ID, 'earlier-100');
    await ledger.recordUse(PROJECT_ID, 'earlier-101');
    const overSpent = await openedHome(h, 'U0CEA');
    expect(overSpent).toContain('0 of 100 agent uses');
    expect(overSpent).toContain('The next use frees up at <!date^');
    expect(overSpent).not.toContain('-2 of 100');
  });

  it('once Mintlify refused a job for the hour’s limit, does not say the hour’s uses are all left', async () => {
    h = await startBot();
    // Uses the bot did not make (another integration, the dashboard) count in Mintlify's hour too.
    h.mintlify.injectFault('createJob', { status: 429 });
    await h.command('Document the export flag', {
      user_id: 'U0ADA',
      channel_id: 'C0DOCS',
      response_url: h.slack.responseUrl('limited'),
    });
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'limited');
    expect(String(answer.args.text)).toContain(
      'limit of 100 agent uses per hour for this project is reached',
    );
    const home = await openedHome(h, 'U0ADA');
    expect(home).not.toContain('100 of 100 agent uses');
  });

  it('is still shown, with a plain line for the budget, when the agent budget cannot be read', async () => {
    h = await startBot();
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    vi.spyOn(h.bot.context.jobs.ledger, 'current').mockRejectedValue(new Error('the budget read timed out'));
    const home = await openedHome(h, 'U0ADA');
    expect(home).toContain('Document the export flag');
    expect(home).toContain('I can’t read the agent budget right now.');
    expect(home).toContain('How to use the docs agent');
  });

  it('says a digest with no schedule of the bot’s (DIGEST_CRON=off) is posted on one kept outside it', async () => {
    h = await startBot({ env: { DIGEST_CHANNEL: 'C0DIGEST', DIGEST_CRON: 'off' } });
    await openHome(h, 'U0ADA');
    const home = shown(await h.slack.waitForCall('views.publish'));
    expect(home).toContain('is posted in <#C0DIGEST> on a schedule kept outside the bot');
    expect(home).toContain('No recent jobs of yours');
  });

  it('says no weekly digest is set up when no channel is given for one, and how to post one now', async () => {
    h = await startBot({ env: { DIGEST_CHANNEL: undefined } });
    const home = await openedHome(h, 'U0ADA');
    expect(home).toContain(
      'No weekly digest is set up (whoever runs the bot can turn it on). `/docs-agent digest` in a channel',
    );
    expect(home).not.toContain('<#');
  });

  it('shows a job with a long instruction on a short line, its links kept after it', async () => {
    h = await startBot();
    // Each & is five characters once escaped: the instruction (600 characters kept) would fill Slack's 3,000.
    await startJobAs(h, 'U0ADA', `Document ${'&amp;'.repeat(700)}`);
    const home = await openedHome(h, 'U0ADA');
    expect(home).toMatch(
      /“Document (&amp;)+…”\\nstarted <!date\^\d+\^\{ago\}\|[^>]+> {2}· {2}<https:\/\/slack\.com\/archives\/C0DOCS\/p\d+\|thread>/,
    );
  });

  it('tells someone ALLOWED_USER_IDS leaves out that the bot is not for them, and shows no doors', async () => {
    h = await startBot({ env: { ALLOWED_USER_IDS: 'U0ADA', ALLOWED_CHANNEL_IDS: 'C0DOCS' } });
    await openHome(h, 'U0EVE');
    const refused = shown(
      await h.slack.waitForCall('views.publish', (call) => call.args.user_id === 'U0EVE'),
    );
    expect(refused).toContain('only available to some people in this workspace');
    expect(refused).not.toContain('How to use the docs agent');
    expect(refused).not.toContain('Mention me');
    // Someone it is for sees the whole tab, whatever the channel allowlist.
    await openHome(h, 'U0ADA');
    const home = shown(await h.slack.waitForCall('views.publish', (call) => call.args.user_id === 'U0ADA'));
    expect(home).toContain('How to use the docs agent');
  });

  it('is not published for the Messages tab', async () => {
    h = await startBot();
    await openHome(h, 'U0ADA', 'messages');
    await openHome(h, 'U0ADA');
    await h.slack.waitForCall('views.publish');
    await h.bot.drained();
    expect(h.slack.callsTo('views.publish')).toHaveLength(1);
  });

  it('is refreshed with the pull request when one of the person’s jobs changes status', async () => {
    h = await startBot({ env: FAST_POLL, homeRefreshMinIntervalMs: REFRESH_MIN_INTERVAL_MS });
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    const openedAt = Date.now();
    await openHome(h, 'U0ADA');
    const opened = await h.slack.waitForCall('views.publish', (call) => call.at >= openedAt);
    expect(shown(opened)).toContain('Working on it');

    h.mintlify.setJob('job-1', { status: 'completed', prLink: PR });
    // Refreshes are at least REFRESH_MIN_INTERVAL_MS apart: this one may wait for the opening's.
    const refreshed = await h.slack.waitForCall('views.publish', (call) => shown(call).includes(PR), 20_000);
    expect(refreshed.args.user_id).toBe('U0ADA');
    expect(shown(refreshed)).toContain('Pull request ready');
  });

  it('with two workers, a publish that read older state and lands last is refused by Slack, and reads again', async () => {
    h = await startBot({ env: FAST_POLL, homeRefreshMinIntervalMs: REFRESH_MIN_INTERVAL_MS });
    const other = await startBot({
      namespace: h.config.store.namespace,
      slack: h.slack,
      mintlify: h.mintlify,
      env: { ...FAST_POLL, SERVICES: 'worker' },
    });
    try {
      await startJobAs(h, 'U0ADA', 'Document the export flag');
      await h.slack.waitForCall('views.publish', (call) => call.response.ok === true);
      // The tab's hash is kept once Slack has answered: the publishes after it carry it.
      const latestHash = () => {
        const landed = h.slack.callsTo('views.publish').filter((call) => call.response.ok === true);
        return (landed.at(-1)?.response.view as { hash?: string } | undefined)?.hash;
      };
      expect(latestHash()).toEqual(expect.any(String));
      await expect
        .poll(async () => (await h.bot.store.kv.get('home-hash:U0ADA')) === latestHash())
        .toBe(true);

      // The other worker publishes the tab (its app_home_opened, say) while the job works: it has
      // read the jobs, and its call is slow to reach Slack (a network hiccup, its client's retries).
      const reached = heldStep();
      const arrive = heldStep();
      const jobs = other.bot.context.jobs;
      const publish = jobs.slack.views.publish.bind(jobs.slack.views);
      const slowSlack = {
        ...jobs.slack,
        views: {
          ...jobs.slack.views,
          publish: async (args: Parameters<typeof publish>[0]) => {
            reached.release();
            await arrive.until;
            return publish(args);
          },
        },
      } as typeof jobs.slack;
      const late = publishHome({ ...jobs, slack: slowSlack }, 'U0ADA');
      await reached.until;

      // Meanwhile the job opens its pull request, and the tab is refreshed with it.
      h.mintlify.setJob('job-1', { status: 'completed', prLink: PR });
      await h.slack.waitForCall(
        'views.publish',
        (call) => call.response.ok === true && shown(call).includes(PR),
      );
      arrive.release();
      await late;

      // The late one carried the tab's hash from before: Slack refused it, and it read the jobs again.
      const publishes = h.slack.callsTo('views.publish');
      expect(publishes.map((call) => call.response.error)).toContain('hash_conflict');
      const last = publishes.filter((call) => call.response.ok === true).at(-1)!;
      expect(shown(last)).toContain('Pull request ready');
    } finally {
      await other.close();
    }
  });

  it('is not published again on a job change that leaves it as it is, unless the person opens it', async () => {
    h = await startBot();
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    const jobs = h.bot.context.jobs;
    const shownHomes: ShownHomes = new Map();
    const count = () => h.slack.callsTo('views.publish').length;
    await publishHome(jobs, 'U0ADA', shownHomes);
    const published = count();
    // A second refresh with nothing to show that the first did not (as a check that noted what it
    // read, then saved it, asks): not sent.
    await publishHome(jobs, 'U0ADA', shownHomes);
    expect(count()).toBe(published);
    // Another process published since (its hash is the tab's now): sent, so the newest state is shown.
    await publishHome(jobs, 'U0ADA');
    expect(count()).toBe(published + 1);
    await publishHome(jobs, 'U0ADA', shownHomes);
    expect(count()).toBe(published + 2);
    // Something new to show: sent.
    await jobs.ledger.recordUse(PROJECT_ID, 'create:job-elsewhere');
    await publishHome(jobs, 'U0ADA', shownHomes);
    expect(count()).toBe(published + 3);
    expect(shown(h.slack.callsTo('views.publish').at(-1)!)).toContain('98 of 100');
  });

  it('is not refreshed while the person’s job is read again and again without a change', async () => {
    h = await startBot({
      env: { ...FAST_POLL, POLL_REQUESTS_PER_MINUTE: '6000' },
      homeRefreshMinIntervalMs: REFRESH_MIN_INTERVAL_MS,
    });
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    expect(await openedHome(h, 'U0ADA')).toContain('Working on it');
    const publishes = h.slack.callsTo('views.publish').length;

    // A dozen checks, 0.1 s or more apart: over several refresh intervals, each reads the job as it was.
    const reads = () => h.mintlify.requestsFor('getJob').length;
    const seen = reads();
    await expect.poll(reads, { timeout: 20_000 }).toBeGreaterThanOrEqual(seen + 12);
    await h.bot.drained();
    expect(h.slack.callsTo('views.publish')).toHaveLength(publishes);
  });

  it('is refreshed when one of the person’s jobs is gone from Mintlify', async () => {
    h = await startBot({ env: FAST_POLL, homeRefreshMinIntervalMs: REFRESH_MIN_INTERVAL_MS });
    await startJobAs(h, 'U0ADA', 'Document the export flag');
    expect(await openedHome(h, 'U0ADA')).toContain('Working on it');

    h.mintlify.jobs.delete('job-1');
    // Refreshes are at least REFRESH_MIN_INTERVAL_MS apart: this one may wait for the opening's.
    const refreshed = await h.slack.waitForCall(
      'views.publish',
      (call) => shown(call).includes('Gone from Mintlify'),
      20_000,
    );
    expect(refreshed.args.user_id).toBe('U0ADA');
    expect(shown(refreshed)).not.toContain('Working on it');
  });
});
