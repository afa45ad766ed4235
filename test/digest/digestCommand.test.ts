import { afterEach, describe, expect, it, vi } from 'vitest';
import { STOPPED_TEXT } from '../../src/digest/digestAnswers.js';
import { DigestRecords } from '../../src/digest/digestRecords.js';
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { addDays } from '../../src/digest/period.js';
import type { RecordedRequest } from '../fakes/mintlifyFake.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { heldStep } from '../support/leases.js';
import { redisKeys } from '../support/redis.js';
import { visitorsRows as rows } from '../support/visitors.js';

let h: BotHarness;
afterEach(async () => h?.close());

/** The period `/docs-agent digest` covers when typed now: the 7 full days before today (UTC here). */
function lastSevenDays() {
  const dateTo = new Date().toISOString().slice(0, 10);
  return { dateFrom: addDays(dateTo, -7), dateTo };
}

const pageRequests = (h: BotHarness) =>
  h.mintlify.requestsFor('visitors').filter((request) => request.query.limit === '250');
const offsets = (requests: RecordedRequest[]) => requests.map((request) => Number(request.query.offset));
const shown = (call: { args: Record<string, unknown> }) => JSON.stringify(call.args.blocks);

/** `/docs-agent digest`, given up when the second page of visitors meets an hour's 429 (DIGEST_GIVE_UP_MS). */
async function digestGivenUpAtSecondPage(h: BotHarness): Promise<void> {
  h.mintlify.injectFault((request) => request.query.offset === '250', { status: 429, retryAfter: '3600' }, 1);
  await h.command('digest');
  await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
  await h.bot.drained();
}

/**
 * A first `/docs-agent digest` whose read Mintlify refuses, and a second one asked meanwhile in the
 * same channel: told it will appear shortly, then that it will not, with the first one's reason.
 */
async function promisedThenFailed(h: BotHarness): Promise<void> {
  h.mintlify.setVisitors(rows(3));
  // The first digest's read is held, then refused: no digest comes of it.
  const read = heldStep();
  h.mintlify.injectFault('visitors', {
    status: 400,
    body: { error: 'Invalid query parameters' },
    until: read.until,
  });

  await h.command('digest', { user_id: 'U0ADA', response_url: h.slack.responseUrl('ada') });
  await expect.poll(() => pageRequests(h).length).toBe(1);
  await h.command('digest', { user_id: 'U0BEA', response_url: h.slack.responseUrl('bea') });
  const promised = await h.slack.waitForCall('response_url', (call) => call.responseId === 'bea');
  expect(promised.args.text).toBe(
    'A digest for this channel is already being prepared; it will appear here shortly.',
  );

  read.release();
  const toAda = await h.slack.waitForCall('response_url', (call) => call.responseId === 'ada');
  await h.bot.drained();
  expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
  // No digest will appear: the person promised one is not left waiting for it.
  const toBea = h.slack.callsTo('response_url').filter((call) => call.responseId === 'bea');
  expect(toBea.at(-1)?.args.text).not.toBe(
    'A digest for this channel is already being prepared; it will appear here shortly.',
  );
  // She hears why, in the words the first person got, and what to do.
  expect(toBea.map((call) => call.args.text)).toEqual([
    'A digest for this channel is already being prepared; it will appear here shortly.',
    `The digest being prepared for this channel will not be posted after all. ${String(toAda.args.text)} Once that is sorted out, ask for it again with \`/docs-agent digest\`.`,
  ]);
}

describe('/docs-agent digest', () => {
  it('answers at once, then posts the last 7 days’ digest in the channel where it was typed', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(600), { human: 4_000, ai: 500, total: 4_300 });

    const res = await h.command('digest', { channel_id: 'C0DOCS' });

    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('Gathering'),
    });
    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.response.ok).toBe(true);
    expect(post.args.channel).toBe('C0DOCS');
    expect(post.args.text).toContain('4,300 visitors (4,000 human, 500 AI)');
    expect(shown(post)).toContain('*Top 10 pages*');
    // Nothing more is said: the acknowledgement said the digest would be posted here, and it is.
    await h.bot.drained();
    expect(h.slack.callsTo('response_url')).toEqual([]);

    const period = lastSevenDays();
    // Every offset exactly once, 250 rows a page, the last one short.
    expect(pageRequests(h).map((request) => request.query)).toEqual(
      [0, 250, 500].map((offset) => ({ ...period, limit: '250', offset: String(offset) })),
    );
  });

  it('`digest the API page` is an instruction for the agent, not the digest', async () => {
    h = await startBot();
    await h.command('digest the API page');

    await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob')[0]?.body).toEqual({ prompt: 'digest the API page' });
    expect(h.mintlify.requestsFor('visitors')).toEqual([]);
  });

  it('is listed in the usage help', async () => {
    h = await startBot();
    const res = await h.command('help');
    expect(res.json).toMatchObject({ text: expect.stringContaining('`/docs-agent digest`') });
  });

  it('a site past DIGEST_MAX_PAGES is read to the cap once: a second digest of the period reads nothing', async () => {
    h = await startBot({ env: { DIGEST_MAX_PAGES: '2' } });
    h.mintlify.setVisitors(rows(600)); // 3 pages
    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0DOCS');
    expect(offsets(pageRequests(h))).toEqual([0, 250]);
    await h.command('digest', { channel_id: 'C0OTHER' });
    const second = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0OTHER');
    expect(shown(second)).toContain(
      'at least 500 pages had visits  ·  :warning: ranked from the first 500 paths of Mintlify’s export only (DIGEST_MAX_PAGES stopped the read after 2 requests); the site has more paths',
    );
    expect(offsets(pageRequests(h))).toEqual([0, 250]);
  });

  it('after DIGEST_TOP changes, a second digest of the period lists as many pages as it now says, reading again only for more', async () => {
    h = await startBot({ env: { DIGEST_TOP: '5' } });
    h.mintlify.setVisitors(rows(600));
    await h.command('digest', { channel_id: 'C0FIVE' });
    const five = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0FIVE');
    await h.bot.drained();
    expect(shown(five)).toContain('*Top 5 pages*');
    await h.stopBot();
    // The same Redis, restarted with another DIGEST_TOP.
    const restartedWith = async (top: string, channel: string) => {
      const again = await startBot({
        env: { DIGEST_TOP: top },
        slack: h.slack,
        mintlify: h.mintlify,
        namespace: h.config.store.namespace,
      });
      try {
        await again.command('digest', { channel_id: channel });
        const post = await again.slack.waitForCall(
          'chat.postMessage',
          (call) => call.args.channel === channel,
        );
        await again.bot.drained();
        return shown(post);
      } finally {
        await again.close();
      }
    };

    // More pages than were kept: the export is read again for them.
    const ten = await restartedWith('10', 'C0TEN');
    expect(ten).toContain('*Top 10 pages*');
    expect(ten).toContain('*10.*');
    expect(offsets(pageRequests(h))).toEqual([0, 250, 500, 0, 250, 500]);
    // Fewer: the kept ranking is cut, and nothing is read.
    const three = await restartedWith('3', 'C0THREE');
    expect(three).toContain('*Top 3 pages*');
    expect(three).toContain('*3.*');
    expect(three).not.toContain('*4.*');
    expect(offsets(pageRequests(h))).toEqual([0, 250, 500, 0, 250, 500]);
  });

  it('a 429 mid-way waits as Mintlify asks and resumes at the same offset', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(600));
    h.mintlify.injectFault((request) => request.query.offset === '250', { status: 429, retryAfter: '1' });

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.response.ok).toBe(true);
    expect(offsets(pageRequests(h))).toEqual([0, 250, 250, 500]);
    // A wait that short is not worth a word to the person who asked.
    await h.bot.drained();
    expect(h.slack.callsTo('response_url')).toEqual([]);
  });

  it('tells the person who asked, once, when Mintlify’s analytics limit makes the digest wait long', async () => {
    // The waits are asked for and taken at once: what is said of them is what is tested.
    const waited: number[] = [];
    h = await startBot({ digest: { sleep: async (ms) => void waited.push(ms) } });
    h.mintlify.setVisitors(rows(600));
    for (const offset of ['250', '500']) {
      h.mintlify.injectFault((request) => request.query.offset === offset, {
        status: 429,
        retryAfter: '120',
      });
    }

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.response.ok).toBe(true);
    expect(offsets(pageRequests(h))).toEqual([0, 250, 250, 500, 500]);
    expect(waited).toEqual([120_000, 120_000]);
    await h.bot.drained();
    const told = h.slack.callsTo('response_url').filter((call) => call.args.text !== undefined);
    expect(told).toHaveLength(1);
    expect(told[0]!.args).toMatchObject({ response_type: 'ephemeral' });
    expect(String(told[0]!.args.text)).toMatch(/analytics limit/);
  });

  it('gives up after DIGEST_GIVE_UP_MS with one log line and a plain answer', async () => {
    h = await startBot({ env: { DIGEST_GIVE_UP_MS: '1000' } });
    h.mintlify.setVisitors(rows(600));
    h.mintlify.injectFault(
      (request) => request.query.offset === '250',
      { status: 429, retryAfter: '3600' },
      50,
    );

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args).toEqual({ response_type: 'ephemeral', text: expect.any(String) });
    expect(answer.args.text).toMatch(/analytics limit \(100 requests an hour.*\)/);
    expect(answer.args.text).toContain('try again after');
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
    expect(offsets(pageRequests(h))).toEqual([0, 250]);
    const gaveUp = h.logs.filter((line) => line.includes('was not posted'));
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]).toMatch(/ERROR.*gave up reading the visitors for .* at offset 250/);
  });

  it('asked again after giving up, reads on from the page where it stopped: the hour’s requests go to pages not read yet', async () => {
    h = await startBot({ env: { DIGEST_GIVE_UP_MS: '1000' } });
    h.mintlify.setVisitors(rows(600, { peak: 7 })); // the most visited path, on the first page
    await digestGivenUpAtSecondPage(h);

    await h.command('digest');
    const post = await h.slack.waitForCall('chat.postMessage');
    expect(offsets(pageRequests(h))).toEqual([0, 250, 250, 500]);
    // Ranked over every page: first the path read before it stopped.
    expect(shown(post)).toMatch(/\*1\.\*[^*]*\/page-7[^0-9]/);
    expect(h.logs.some((line) => line.includes('reading the visitors from offset 250'))).toBe(true);
    expect(await new DigestRecords(h.bot.store).progress(lastSevenDays())).toBeUndefined();
  });

  it('after giving up, reads from the first page again once DIGEST_TOP changed: a shorter ranking kept would miss pages', async () => {
    h = await startBot({ env: { DIGEST_GIVE_UP_MS: '1000', DIGEST_TOP: '5' } });
    h.mintlify.setVisitors(rows(600));
    await digestGivenUpAtSecondPage(h);
    await h.stopBot();

    // The same Redis, restarted with DIGEST_TOP=10.
    const again = await startBot({
      env: { DIGEST_TOP: '10' },
      slack: h.slack,
      mintlify: h.mintlify,
      namespace: h.config.store.namespace,
    });
    try {
      await again.command('digest');
      const post = await again.slack.waitForCall('chat.postMessage');
      await again.bot.drained();
      expect(offsets(pageRequests(h))).toEqual([0, 250, 0, 250, 500]);
      expect(shown(post)).toContain('*Top 10 pages*');
    } finally {
      await again.close();
    }
  });

  it('reads from the first page again when the earlier read began before the period ended in UTC (its numbers were not final)', async () => {
    // Kiritimati is 14 h ahead of UTC: at 12:00 UTC its week ended 2 h ago, and ends in UTC 12 h later.
    const now = new Date('2026-11-24T12:00:00Z');
    h = await startBot({ env: { DIGEST_TIMEZONE: 'Pacific/Kiritimati' }, now: () => now });
    h.mintlify.setVisitors(rows(600, { peak: 7 }));
    const period = { dateFrom: '2026-11-18', dateTo: '2026-11-25' };
    await new DigestRecords(h.bot.store).saveProgress(period, {
      offset: 250,
      pagesRead: 1,
      totals: { human: 1, ai: 0, total: 1 },
      top: [{ path: '/early', human: 1, ai: 0, total: 1 }],
      seen: 250,
      size: 10,
      collectedAt: '2026-11-24T11:00:00.000Z',
    });

    await h.command('digest');
    const post = await h.slack.waitForCall('chat.postMessage');
    expect(pageRequests(h).map((request) => request.query.dateTo)).toEqual([
      '2026-11-25',
      '2026-11-25',
      '2026-11-25',
    ]);
    expect(offsets(pageRequests(h))).toEqual([0, 250, 500]);
    expect(shown(post)).not.toContain('/early');
  });

  it('answers a 400 from Mintlify in plain words', async () => {
    h = await startBot();
    h.mintlify.injectFault('visitors', {
      status: 400,
      body: { error: 'Invalid query parameters', details: [{ message: 'dateFrom is too old' }] },
    });

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args.text).toBe(
      'Mintlify did not accept the request for visitor numbers (Invalid query parameters). Please let the person who installed this app know.',
    );
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
    expect(h.mintlify.requestsFor('visitors')).toHaveLength(1);
  });

  it('a 404 for the project: the log names MINTLIFY_PROJECT_ID, as README’s troubleshooting says (a scheduled digest has only the log)', async () => {
    h = await startBot();
    h.mintlify.injectFault('visitors', { status: 404, body: { error: 'Project not found' } });

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args.text).toContain('check MINTLIFY_PROJECT_ID');
    const logged = h.logs.filter((line) => line.includes('was not posted'));
    expect(logged).toHaveLength(1);
    // README: "Mintlify could not find the docs project" (404), and `check MINTLIFY_PROJECT_ID` in the log.
    expect(logged[0]).toContain('check MINTLIFY_PROJECT_ID');
  });

  it('shows Mintlify’s words about a 400 as text: they can disguise no link and ping nobody', async () => {
    h = await startBot();
    h.mintlify.injectFault('visitors', {
      status: 400,
      body: { error: 'Bad range <!here> & <https://evil.example|see why>' },
    });

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args.text).toContain(
      '(Bad range &lt;!here&gt; &amp; &lt;https://evil.example|see why&gt;)',
    );
    expect(answer.args.text).not.toContain('<!here>');
  });

  it('answers a lasting 500 in plain words once the client’s retries are spent', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(300));
    h.mintlify.injectFault('visitors', { status: 500 }, 100);

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args.text).toContain('Mintlify’s analytics did not answer properly');
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
    expect(h.logs.filter((line) => line.includes('was not posted'))).toHaveLength(1);
  });

  it('tells the person to invite the bot when it is not in the channel', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });

    await h.command('digest');

    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(answer.args.text).toContain('/invite @docs-agent');
    expect(h.logs.some((line) => line.includes('not_in_channel: invite the bot to the channel'))).toBe(true);
  });

  it('where the bot is not a member, says to invite it before reading any numbers (asking again spends none)', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    h.slack.setBotMember('C0CLOSED', false);
    await h.command('digest', { channel_id: 'C0CLOSED', response_url: h.slack.responseUrl('closed') });
    const answer = await h.slack.waitForCall(
      'response_url',
      (call) => call.responseId === 'closed' && call.args.text !== undefined,
    );
    expect(answer.args.text).toContain('/invite @docs-agent');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('visitors')).toEqual([]);
    expect(h.slack.callsTo('chat.postMessage')).toEqual([]);
  });

  it('in a private channel the bot is not in, says to invite it; asked again, reads no visitor numbers twice', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    h.slack.failNext('chat.postMessage', { error: 'channel_not_found' });

    await h.command('digest', { response_url: h.slack.responseUrl('first') });
    const answer = await h.slack.waitForCall(
      'response_url',
      (call) => call.responseId === 'first' && call.args.text !== undefined,
    );
    expect(answer.args.text).toContain('not a member of this conversation');
    expect(answer.args.text).toContain('/invite @docs-agent');
    expect(answer.args.text).not.toContain('archived');
    const reads = h.mintlify.requestsFor('visitors').length;

    await h.command('digest', { response_url: h.slack.responseUrl('again') });
    const posted = await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    expect(String(posted.args.text)).toContain('visitors');
    // The week's export and the week before's total were kept: neither is read again.
    expect(h.mintlify.requestsFor('visitors')).toHaveLength(reads);
  });

  it('a second request in the same channel while one is on its way is told so, not run twice', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    // The first digest's read is held until the second request has been answered.
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });

    await h.command('digest');
    await h.command('digest');

    const busy = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    expect(busy.args.text).toBe(
      'A digest for this channel is already being prepared; it will appear here shortly.',
    );
    read.release();
    await h.slack.waitForCall('chat.postMessage');
    expect(pageRequests(h)).toHaveLength(1);
  });

  it('a request whose run outlasts its hold (its process too busy, or Redis away, past QUEUE_LOCK_MS) is posted once, though the queue runs it again', async () => {
    h = await startBot({ env: { QUEUE_LOCK_MS: '2000' } });
    h.mintlify.setVisitors(rows(3));
    // The first run waits on Mintlify's read of the visitors.
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    await h.command('digest', { channel_id: 'C0DOCS' });
    await expect.poll(() => pageRequests(h).length).toBe(1);

    // Its holds lapse meanwhile, as after a stall or a Redis outage longer than them: the queue job's
    // lock, and the leases the digest is prepared under.
    const { namespace } = h.config.store;
    const { atomic } = h.bot.store;
    const held = [
      ...(await redisKeys(`${namespace}:requests:command_digest-*:lock`)),
      ...(await redisKeys(`${namespace}:lease:digest-request*`)),
    ].map((key) => key.slice(namespace.length + 1));
    expect(held).toHaveLength(3);
    for (const key of held) {
      const holder = await atomic.holder(key);
      if (holder !== undefined) await atomic.deleteIfValue(key, holder);
    }
    // The queue runs the request again, which reads the visitors in its turn.
    await expect.poll(() => pageRequests(h).length, { timeout: 10_000 }).toBe(2);
    read.release();

    const digests = () =>
      h.slack
        .history('C0DOCS')
        .filter(
          (message) =>
            (message.metadata as { event_type?: string })?.event_type === 'docs_agent_digest_on_request',
        );
    await expect.poll(() => digests().length).toBeGreaterThan(0);
    // Both runs are over once the bot has stopped (running work finishes in the stop's grace).
    await h.stopBot();
    expect(digests()).toHaveLength(1);
    // Its asker sees the digest, and nothing else: not told one is on its way, nor that it failed.
    expect(h.slack.callsTo('response_url').map((call) => call.args.text)).toEqual([]);
  });

  it('a second request told the digest will appear shortly hears that it will not, when the first one fails', async () => {
    h = await startBot();
    await promisedThenFailed(h);
  });

  it('without Redis, a second request told the digest will appear shortly hears that it will not, when the first one fails', async () => {
    h = await startBot({ memory: true });
    await promisedThenFailed(h);
  });

  it('a second request told the digest will appear shortly is not told it will not be posted when Slack may have stored it', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3), { human: 40, ai: 5, total: 43 });
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    const asked = (user: string, as: string) =>
      h.command('digest', { channel_id: 'C0DOCS', user_id: user, response_url: h.slack.responseUrl(as) });
    await asked('U0ADA', 'ada');
    await expect.poll(() => pageRequests(h).length).toBe(1);
    await asked('U0BEA', 'bea');
    await h.slack.waitForCall('response_url', (call) => call.responseId === 'bea');

    // Slack stores the digest but its answer is lost, and the channel cannot be read to look for it.
    h.slack.failNext('chat.postMessage', { status: 503, landed: true, channel: 'C0DOCS' });
    h.slack.failNext('conversations.history', { status: 503 }, 10);
    read.release();
    await h.slack.waitForCall('response_url', (call) => call.responseId === 'ada');
    await h.bot.drained();

    const digests = h.slack
      .history('C0DOCS')
      .filter((message) => String(message.text).startsWith('Docs digest'));
    expect(digests).toHaveLength(1);
    // The digest is in the channel: nobody is told it will not be posted.
    const toBea = h.slack.callsTo('response_url').filter((call) => call.responseId === 'bea');
    expect(toBea.map((call) => String(call.args.text)).join('\n')).not.toContain('will not be posted');
    expect(String(toBea.at(-1)?.args.text)).toContain('it may be here already');
  });

  it('a second request told the digest will appear shortly, interrupted by Redis as it is noted, is told so once', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });
    await h.command('digest', { user_id: 'U0ADA', response_url: h.slack.responseUrl('ada') });
    await expect.poll(() => pageRequests(h).length).toBe(1);
    // Redis does not answer as bea is noted among those waiting: her request runs again once it does.
    const { atomic } = h.bot.store;
    const add = atomic.indexAdd.bind(atomic);
    let refused = false;
    vi.spyOn(atomic, 'indexAdd').mockImplementation(async (key, ...rest) => {
      if (!refused && key.includes('digest-waiting:')) {
        refused = true;
        throw new StoreTimeoutError('an index add', 5_000);
      }
      return add(key, ...rest);
    });
    await h.command('digest', { user_id: 'U0BEA', response_url: h.slack.responseUrl('bea') });
    const toBea = () => h.slack.callsTo('response_url').filter((call) => call.responseId === 'bea');
    // Run again once Redis answers, the request notes her as waiting.
    await expect.poll(() => atomic.indexAll('digest-waiting:C0CHANNEL'), { timeout: 10_000 }).toHaveLength(1);
    read.release();
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();
    // The digest came: bea was told once that it would.
    expect(toBea().map((call) => call.args.text)).toEqual([
      'A digest for this channel is already being prepared; it will appear here shortly.',
    ]);
  });

  it('a note of someone waiting for the channel’s digest that cannot be read is cleared when a digest there ends', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    const { atomic } = h.bot.store;
    // Left by another version of the bot, or written by hand: it names nobody to answer.
    await atomic.indexAdd('digest-waiting:C0CHANNEL', '{"id":"1"}', Date.now(), undefined, 60_000);
    await h.command('digest');
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();
    expect(await atomic.indexAll('digest-waiting:C0CHANNEL')).toEqual([]);
  });

  it('asked in one process while another prepares the digest, hears once that it will not come when that one is restarted', async () => {
    h = await startBot({ stopGraceMs: 200 });
    h.mintlify.setVisitors(rows(3));
    // The digest waits out Mintlify's analytics limit in the first process.
    h.mintlify.injectFault('visitors', { status: 429, retryAfter: '600' }, 100);
    await h.command('digest', { user_id: 'U0ADA', response_url: h.slack.responseUrl('ada') });
    await expect.poll(() => pageRequests(h).length).toBe(1);
    const other = await startBot({
      slack: h.slack,
      mintlify: h.mintlify,
      namespace: h.config.store.namespace,
    });
    try {
      await other.command('digest', { user_id: 'U0BEA', response_url: h.slack.responseUrl('bea') });
      await h.slack.waitForCall('response_url', (call) => call.responseId === 'bea');

      // A deploy restarts the first process before the digest is ready.
      await h.stopBot();
      const toAda = h.slack.callsTo('response_url').filter((call) => call.responseId === 'ada');
      expect(toAda.at(-1)?.args.text).toBe(STOPPED_TEXT);
      const toBea = () => h.slack.callsTo('response_url').filter((call) => call.responseId === 'bea');
      await expect.poll(() => toBea().length).toBe(2);
      expect(toBea().map((call) => call.args.text)).toEqual([
        'A digest for this channel is already being prepared; it will appear here shortly.',
        `The digest being prepared for this channel will not be posted after all. ${STOPPED_TEXT}`,
      ]);

      // Asked again, the digest is posted; bea is told nothing more.
      h.mintlify.clearFaults();
      await other.command('digest', { user_id: 'U0ADA', response_url: h.slack.responseUrl('ada-again') });
      await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
      await other.bot.drained();
      expect(toBea()).toHaveLength(2);
      // The response URLs, with which anyone could post in the channel, are in no log line.
      expect([...h.logs, ...other.logs].filter((line) => line.includes('/response/'))).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('asked again in the same channel within the hour, points at the digest posted there rather than post it twice; deleted, it is posted anew', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    await h.command('digest');
    const first = await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    await h.bot.drained();

    await h.command('digest', { response_url: h.slack.responseUrl('again') });
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'again');
    const link = `https://slack.com/archives/${String(first.args.channel)}/p${String(first.response.ts).replace('.', '')}`;
    expect(answer.args.text).toContain(`was posted in this channel <!date^`);
    expect(answer.args.text).toContain(`<${link}|see it>`);
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
    // Another channel gets its own.
    await h.command('digest', { channel_id: 'C0OTHER' });
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0OTHER');

    // Deleted from the channel, it stands for nothing: asked again, it is posted anew. Someone had
    // replied to it: Slack leaves a tombstone in its place, which stands for nothing either.
    h.slack.seedMessage(String(first.args.channel), {
      user: 'U0BEA',
      text: 'nice',
      thread_ts: String(first.response.ts),
    });
    expect(h.slack.deleteMessage(String(first.args.channel), String(first.response.ts))).toBe(true);
    expect(h.slack.message(String(first.args.channel), String(first.response.ts))?.subtype).toBe('tombstone');
    await h.command('digest');
    await h.slack.waitForCalls(
      'chat.postMessage',
      2,
      (call) => call.args.channel === first.args.channel && call.response.ok === true,
    );
  });

  it('deleted without a reply, the digest is posted anew when asked again, not mistaken for the message before it', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    h.slack.seedMessage('C0DOCS', { user: 'U0BEA', text: 'Can we get this week’s numbers?' });
    await h.command('digest', { channel_id: 'C0DOCS' });
    const first = await h.slack.waitForCall('chat.postMessage', (call) => call.response.ok === true);
    await h.bot.drained();
    expect(first.args.channel).toBe('C0DOCS');

    expect(h.slack.deleteMessage('C0DOCS', String(first.response.ts))).toBe(true);
    expect(h.slack.message('C0DOCS', String(first.response.ts))).toBeUndefined();
    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.slack.waitForCalls(
      'chat.postMessage',
      2,
      (call) => call.args.channel === 'C0DOCS' && call.response.ok === true,
    );
  });

  it('one in another channel meanwhile is told to try again shortly: one digest at a time, as they share the analytics limit', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3));
    const read = heldStep();
    h.mintlify.injectFault('visitors', { until: read.until });

    await h.command('digest', { channel_id: 'C0FIRST' });
    await expect.poll(() => pageRequests(h).length).toBe(1);
    await h.command('digest', { channel_id: 'C0SECOND', response_url: h.slack.responseUrl('second') });
    const busy = await h.slack.waitForCall('response_url', (call) => call.responseId === 'second');
    expect(busy.args.text).toBe(
      'Another digest is being prepared right now, and digests share Mintlify’s analytics limit: try again in a few minutes.',
    );
    read.release();
    await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'C0FIRST');
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postMessage').map((call) => call.args.channel)).toEqual(['C0FIRST']);
  });

  it('is in the channel once when Slack stored the post but its answer was lost (a 503)', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3), { human: 40, ai: 5, total: 43 });
    // Slack stores the digest, then its edge answers 503: the bot never hears it landed.
    h.slack.failNext('chat.postMessage', { status: 503, landed: true, channel: 'C0DOCS' });

    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();

    const digests = h.slack
      .history('C0DOCS')
      .filter((message) => String(message.text).startsWith('Docs digest'));
    expect(digests).toHaveLength(1);
    // Found by its mark, it is not posted again, and the person is told nothing more.
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(h.slack.callsTo('response_url').filter((call) => call.args.text !== undefined)).toEqual([]);
  });

  it('is posted again, once, when Slack failed (a 503) before storing it', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3), { human: 40, ai: 5, total: 43 });
    h.slack.failNext('chat.postMessage', { status: 503 });

    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.slack.waitForCalls('chat.postMessage', 2);
    await h.bot.drained();

    const digests = h.slack
      .history('C0DOCS')
      .filter((message) => String(message.text).startsWith('Docs digest'));
    expect(digests).toHaveLength(1);
  });

  it('is not posted again after a lost answer when the channel cannot be read to look for it: the person is told', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(3), { human: 40, ai: 5, total: 43 });
    h.slack.failNext('chat.postMessage', { status: 503, landed: true, channel: 'C0DOCS' });
    // The check before gathering reads the channel once; the look for the lost post finds Slack down.
    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.slack.waitForCall('conversations.history');
    h.slack.failNext('conversations.history', { status: 503 }, 10);
    const answer = await h.slack.waitForCall('response_url', (call) => call.args.text !== undefined);
    await h.bot.drained();

    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
    expect(answer.args.text).toBe(
      'Slack failed as I posted the digest, and I couldn’t check whether it arrived anyway. If it is not in this channel, please try again in a few minutes.',
    );
  });

  it('posts a short digest for a week without visits', async () => {
    h = await startBot();

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.response.ok).toBe(true);
    expect(post.args.text).toMatch(/^Docs digest, .* \(UTC\): no visits recorded\.$/);
  });

  it('is posted as text, marked as the digest, when Slack will not take its blocks', async () => {
    h = await startBot({ env: { DIGEST_STRUGGLES: '2' } });
    h.mintlify.setVisitors(rows(3), { human: 40, ai: 5, total: 43 });
    // What Slack answers a message past a limit it does not publish (or a block it will not take).
    h.slack.failNext('chat.postMessage', { error: 'msg_blocks_too_long' });

    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.bot.drained();

    const [refused, posted] = h.slack.callsTo('chat.postMessage');
    expect(refused?.response).toMatchObject({ ok: false, error: 'msg_blocks_too_long' });
    expect(posted?.response.ok).toBe(true);
    expect(posted?.args.blocks).toBeUndefined();
    expect(posted?.args.text).toContain('43 visitors (40 human, 5 AI)');
    expect(posted?.args.text).toContain('*Top 3 pages* by unique visitors');
    expect(posted?.args.text).toContain('shown as text');
    // Marked as the digest, as the laid-out one would be: asked again, it is found rather than posted twice.
    expect(posted?.args.metadata).toMatchObject({ event_type: expect.stringContaining('digest') });
    expect(h.slack.callsTo('response_url')).toEqual([]);
    expect(h.logs.filter((line) => line.includes('posting it as text instead'))).toHaveLength(1);

    await h.command('digest', { channel_id: 'C0DOCS' });
    await h.bot.drained();
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(2);
  });

  it('stays within Slack’s limits with 40 very long paths linked to the docs site: what fits is shown, the rest counted', async () => {
    h = await startBot({ env: { DIGEST_TOP: '40', DOCS_SITE_URL: 'https://docs.acme.com/' } });
    h.mintlify.setVisitors(
      Array.from({ length: 300 }, (_, i) => ({
        path: `/${'a-very-long-section-name/'.repeat(i % 2 === 0 ? 8 : 150)}page-${i}`,
        human: 1_000 - i,
        ai: i % 7,
        total: 1_000 - i,
      })),
    );

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    // The first post is taken: the digest's own budget keeps it under Slack's cap on a message's text.
    expect(post.response).toMatchObject({ ok: true });
    expect(post.args.blocks).toBeDefined();
    const count = Number(/\*Top (\d+) pages\*/.exec(shown(post))?.[1]);
    expect(count).toBeGreaterThanOrEqual(10);
    expect(shown(post)).toContain(`the other ${40 - count} pages did not fit in one message`);
    expect(shown(post)).toContain('<https://docs.acme.com/a-very-long-section-name/');
    // Forty links, and no preview under the digest for any of them.
    expect(post.args).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
  });
});

/** Last week's digest numbers, kept as a digest that read its one page of the export keeps them. */
async function keepLastWeek(
  h: BotHarness,
  numbers: Pick<Parameters<DigestRecords['saveNumbers']>[0], 'totals' | 'top' | 'pathCount'>,
): Promise<void> {
  const period = lastSevenDays();
  const before = { dateFrom: addDays(period.dateFrom, -7), dateTo: period.dateFrom };
  await new DigestRecords(h.bot.store).saveNumbers(
    { period: before, ...numbers, pagesRead: 1, complete: true },
    new Date(),
  );
}

describe('week over week', () => {
  it('compares with last week’s kept digest: totals and pages, without asking Mintlify', async () => {
    h = await startBot();
    h.mintlify.setVisitors(
      [
        { path: '/quickstart', human: 90, ai: 30, total: 110 },
        { path: '/new-page', human: 5, ai: 0, total: 5 },
      ],
      { human: 95, ai: 30, total: 115 },
    );
    await keepLastWeek(h, {
      totals: { human: 100, ai: 30, total: 100 },
      top: [{ path: '/quickstart', human: 80, ai: 20, total: 100 }],
      pathCount: 1,
    });

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.args.text).toContain('115 visitors (95 human, 30 AI), ↑ 15% from last week');
    expect(shown(post)).toContain('*Human visitors*\\n95  ↓ 5% from last week');
    expect(shown(post)).toContain('(90 human, 30 AI)  ·  ↑ 10%');
    expect(shown(post)).toContain('(5 human, 0 AI)  ·  new in the top pages');
    expect(h.mintlify.requestsFor('visitors').map((request) => request.query.limit)).toEqual(['250']);
  });

  it('after DIGEST_TOP was raised, a page below last week’s shorter list is not called new in the top pages', async () => {
    h = await startBot({ env: { DIGEST_TOP: '10' } });
    h.mintlify.setVisitors(
      [
        { path: '/quickstart', human: 90, ai: 30, total: 110 },
        { path: '/guide', human: 40, ai: 0, total: 40 },
      ],
      { human: 130, ai: 30, total: 150 },
    );
    // Last week's digest ranked 1 page (DIGEST_TOP=1 then) of the 2 with visits: /guide was second.
    await keepLastWeek(h, {
      totals: { human: 130, ai: 30, total: 150 },
      top: [{ path: '/quickstart', human: 90, ai: 30, total: 110 }],
      pathCount: 2,
    });

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(shown(post)).toContain('(40 human, 0 AI)');
    // It was second of two last week: in any top 2, never new in it.
    expect(shown(post)).not.toContain('(40 human, 0 AI)  ·  new in the top pages');
  });

  it('without a kept digest reads last week’s totals with one request of one row', async () => {
    h = await startBot();
    h.mintlify.setVisitors([{ path: '/quickstart', human: 90, ai: 30, total: 110 }]);
    h.mintlify.injectFault((request) => request.query.limit === '1', {
      status: 200,
      body: { totals: { human: 45, ai: 30, total: 55 }, visitors: [], hasMore: false },
    });

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.args.text).toContain('110 visitors (90 human, 30 AI), ↑ 100% from last week');
    expect(shown(post)).not.toContain('new in the top pages');
    const period = lastSevenDays();
    const [lastWeek] = h.mintlify.requestsFor('visitors').filter((request) => request.query.limit === '1');
    expect(lastWeek?.query).toEqual({
      dateFrom: addDays(period.dateFrom, -7),
      dateTo: period.dateFrom,
      limit: '1',
      offset: '0',
    });
  });

  it('shows no change when last week cannot be read', async () => {
    h = await startBot();
    h.mintlify.setVisitors([{ path: '/quickstart', human: 90, ai: 30, total: 110 }]);
    h.mintlify.injectFault((request) => request.query.limit === '1', { status: 400 });

    await h.command('digest');

    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.args.text).not.toContain('from last week');
    expect(shown(post)).toContain('no numbers from last week to compare with');
  });

  it('reads a period again when it was read before its last day ended in UTC (a time zone east of UTC)', async () => {
    // Monday 10:00 in Auckland is still Sunday in UTC: Mintlify is still counting the week's last day.
    let now = new Date('2026-11-22T21:00:00Z');
    h = await startBot({ env: { DIGEST_TIMEZONE: 'Pacific/Auckland' }, now: () => now });
    h.mintlify.setVisitors(rows(600));
    const digestIn = async (channel: string, count: number) => {
      await h.command('digest', { channel_id: channel });
      await h.slack.waitForCalls('chat.postMessage', count);
      await h.bot.drained();
    };

    await digestIn('C0DOCS', 1);
    expect(h.logs.some((line) => line.includes('before its last day ended in UTC: a second digest'))).toBe(
      true,
    );
    // The same period once the day has ended in UTC: read again, and reused from then on.
    now = new Date('2026-11-23T01:00:00Z');
    await digestIn('C0OTHER', 2);
    await digestIn('C0THIRD', 3);
    expect(pageRequests(h).map((request) => request.query.dateTo)).toEqual(Array(6).fill('2026-11-23'));
    expect(offsets(pageRequests(h))).toEqual([0, 250, 500, 0, 250, 500]);
  });

  it('compares with last week’s numbers page by page, even when those were read before the week ended in UTC', async () => {
    // Monday 09:00 in Auckland, two weeks running: each read while Sunday still runs in UTC.
    let now = new Date('2026-11-22T20:00:00Z');
    h = await startBot({ env: { DIGEST_TIMEZONE: 'Pacific/Auckland' }, now: () => now });
    h.mintlify.setVisitors(rows(600));
    await h.command('digest');
    await h.slack.waitForCalls('chat.postMessage', 1);
    await h.bot.drained();

    now = new Date('2026-11-29T20:00:00Z');
    await h.command('digest');
    const [, second] = await h.slack.waitForCalls('chat.postMessage', 2);
    // Each top page says how it did against last week.
    expect(shown(second!).match(/AI\) {2}· {2}no change/g)).toHaveLength(10);
  });

  it('a second digest of the same period reads its numbers from the store, sparing the hourly budget', async () => {
    h = await startBot();
    h.mintlify.setVisitors(rows(600));

    await h.command('digest');
    const [first] = await h.slack.waitForCalls('chat.postMessage', 1);
    await h.bot.drained();
    await h.command('digest', { channel_id: 'C0OTHER' });
    const [, second] = await h.slack.waitForCalls('chat.postMessage', 2);

    expect(second?.args.channel).toBe('C0OTHER');
    expect(second?.args.blocks).toEqual(first?.args.blocks);
    expect(offsets(pageRequests(h))).toEqual([0, 250, 500]);
  });
});
