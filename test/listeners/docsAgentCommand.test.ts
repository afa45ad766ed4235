import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecords } from '../../src/jobs/jobRecord.js';
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { RateLedger } from '../../src/store/rateLedger.js';
import { FAST_POLL } from '../jobs/followSupport.js';
import { startSlackFake } from '../fakes/slackFake.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';

let h: BotHarness;
afterEach(async () => h?.close());

type Block = { type: string; text?: { text: string }; elements?: Array<{ text?: string; url?: string }> };
const blocksText = (blocks: unknown) => JSON.stringify(blocks as Block[]);
const ephemeral = async (h: BotHarness) => (await h.slack.waitForCall('response_url')).args;

describe('/docs-agent <instruction>', () => {
  it('answers at once, starts the job, and posts a public card whose thread belongs to the job', async () => {
    h = await startBot();
    const res = await h.command('Document the new --dry-run flag', {
      user_id: 'U0ADA',
      channel_id: 'C0DOCS',
    });

    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('Starting a docs agent job: its card will appear here'),
    });

    const card = await h.slack.waitForCall('chat.postMessage');
    expect(card.args.channel).toBe('C0DOCS');
    expect(card.args.thread_ts).toBeUndefined();
    expect(card.args.text).toContain('<@U0ADA>');
    const shown = blocksText(card.args.blocks);
    expect(shown).toContain('Document the new --dry-run flag');
    expect(shown).toContain('job-1');
    // Where the agent works, and with which model, as Mintlify said.
    expect(shown).toContain('`acme/docs` on `mintlify/job-1`  ·  model `sonnet`');

    const [create] = h.mintlify.requestsFor('createJob');
    expect(create?.body).toEqual({ prompt: 'Document the new --dry-run flag' });

    // Nothing more is said: the acknowledgement said where the card would be, and it is there.
    await h.bot.drained();
    expect(h.slack.callsTo('response_url')).toEqual([]);

    const records = new JobRecords(h.bot.store);
    const cardTs = String(card.response.ts);
    await expect.poll(async () => (await records.byThread('C0DOCS', cardTs))?.jobId).toBe('job-1');
    expect(await records.get('job-1')).toMatchObject({
      projectId: 'proj_test',
      channel: 'C0DOCS',
      threadTs: cardTs,
      cardTs,
      requestedBy: 'U0ADA',
      prompt: 'Document the new --dry-run flag',
      status: 'active',
      prLink: null,
      door: 'command',
    });
  });

  it('echoes what people typed escaped, so it can never ping or disguise a link, while the job gets it verbatim', async () => {
    h = await startBot();
    // Slack sends command text with &, < and > escaped.
    await h.command('Fix &lt;!channel&gt; &amp; &lt;@U123&gt; in &lt;https://evil.example|docs&gt;');

    const card = await h.slack.waitForCall('chat.postMessage');
    const shown = `${card.args.text} ${blocksText(card.args.blocks)}`;
    expect(shown).not.toContain('<!channel>');
    expect(shown).not.toContain('<@U123>');
    expect(shown).not.toContain('<https://evil.example|docs>');
    expect(shown).toContain('&lt;!channel&gt; &amp; &lt;@U123&gt;');
    expect(h.mintlify.requestsFor('createJob')[0]?.body).toEqual({
      prompt: 'Fix <!channel> & <@U123> in <https://evil.example|docs>',
    });
  });

  it('quotes every line of a multi-line instruction on the card, not the first alone', async () => {
    h = await startBot();
    await h.command('Document the export flag\nand its --dry-run option\n\nwith an example');

    const card = await h.slack.waitForCall('chat.postMessage');
    const [section] = card.args.blocks as Block[];
    expect(section?.text?.text).toContain(
      '\n>Document the export flag\n>and its --dry-run option\n>\n>with an example',
    );
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
  ])('answers an %s instruction with usage help and sends nothing to Mintlify', async (_kind, text) => {
    h = await startBot();
    const res = await h.command(text);
    expect(res.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('/docs-agent'),
    });
    expect(String((res.json as { text: string }).text)).toContain('Tell me what to change');
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('treats `help` alone as help, and `help me document X` as an instruction', async () => {
    h = await startBot();
    const help = await h.command('help');
    expect(help.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('How to use'),
    });
    // Every < in the text opens a Slack token (@user, #channel, !special, a link): none is a stray bracket.
    expect(String((help.json as { text: string }).text)).not.toMatch(/<(?![@#!]|https?:)/);
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);

    await h.command('help me document the export flag');
    await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob')[0]?.body).toEqual({
      prompt: 'help me document the export flag',
    });
  });

  it.each([
    ['a greeting', 'hi', 'Tell me what to change'],
    ['a thanks', 'thanks!', 'Tell me what to change'],
    ['trying it', 'test', 'Tell me what to change'],
    ['asking what it does', 'what can you do?', 'Tell me what to change'],
    ['a lone stop', 'stop', 'I can’t stop a docs agent job from Slack'],
    ['a cancel', 'Cancel it.', 'I can’t stop a docs agent job from Slack'],
  ])(
    'answers %s, which every door reads as no instruction, and starts no job',
    async (_kind, text, answer) => {
      h = await startBot();
      const res = await h.command(text);
      expect(res.json).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining(answer) });
      expect(String((res.json as { text: string }).text)).toContain(`I didn’t start a job for “${text}”`);
      await h.bot.drained();
      expect(h.mintlify.requests).toHaveLength(0);
      expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    },
  );

  it.each([
    ['statsu', 'status'],
    ['Stauts?', 'status'],
    ['hlep', 'help'],
    ['digets', 'digest'],
  ])(
    'takes a lone “%s” for a mistyped `%s`: it asks whether that was meant, and starts no job',
    async (text, meant) => {
      h = await startBot();
      const res = await h.command(text);
      expect(res.json).toMatchObject({ response_type: 'ephemeral' });
      const answer = String((res.json as { text: string }).text);
      expect(answer).toContain(`I didn’t start a job for “${text}”`);
      expect(answer).toContain(`Did you mean \`/docs-agent ${meant}\`?`);
      await h.bot.drained();
      expect(h.mintlify.requests).toHaveLength(0);
    },
  );

  it('starts a job for a lone word that is no subcommand mistyped', async () => {
    h = await startBot();
    await h.command('Changelog');
    await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
      { prompt: 'Changelog' },
    ]);
  });

  it('echoes a greeting that names people or @here as text, never as a mention', async () => {
    h = await startBot();
    // As Slack sends `hi @here @Cat`: its own tokens, which the answer must not render as mentions.
    const res = await h.command('hi <!here> <@U0CAT>');
    const text = String((res.json as { text: string }).text);
    expect(text).toContain('I didn’t start a job for “hi &lt;!here&gt; &lt;@U0CAT&gt;”');
    expect(text).not.toContain('<!here>');
    expect(text).not.toContain('<@U0CAT>');
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);
  });

  it('reads a subcommand or an instruction typed with spaces around it as if typed without them', async () => {
    h = await startBot();
    await h.command('  status  ', { response_url: h.slack.responseUrl('status') });
    const listed = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    expect(String(listed.args.text)).toContain('No docs agent jobs in this channel yet');
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);

    await h.command('  Document the export flag \n');
    const card = await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
      { prompt: 'Document the export flag' },
    ]);
    expect(blocksText(card.args.blocks)).toContain('Document the export flag');
  });

  it('starts no job for a mention of people alone (`@cat`, `@here`), as a mention or a DM of the same gets the help', async () => {
    h = await startBot();
    // The manifest has should_escape: false, so Slack sends a mention in a command as the plain text typed.
    for (const text of ['@cat', '@here']) {
      const res = await h.command(text);
      expect(String((res.json as { text: string }).text)).toContain(`I didn’t start a job for “${text}”`);
    }
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([]);
    // Naming someone with something to change is an instruction.
    await h.command('@cat document the export flag');
    await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([
      { prompt: '@cat document the export flag' },
    ]);
  });

  it('reads `help status` as help, and `jobs`, `my jobs` or `list` as `status`, while instructions using those words start jobs', async () => {
    h = await startBot();
    const help = await h.command('help status');
    expect(help.json).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('How to use'),
    });
    for (const [i, text] of ['jobs', 'my jobs', 'list'].entries()) {
      await h.command(text, { response_url: h.slack.responseUrl(`status-${i}`) });
      const listed = await h.slack.waitForCall('response_url', (call) => call.responseId === `status-${i}`);
      expect(String(listed.args.text)).toContain('No docs agent jobs in this channel yet');
    }
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);

    for (const text of ['help page for SSO is wrong', 'list the env vars on the config page']) {
      await h.command(text);
    }
    await h.slack.waitForCalls('chat.postMessage', 2);
    await h.bot.drained();
    // Started side by side: in either order.
    const prompts = h.mintlify
      .requestsFor('createJob')
      .map((request) => (request.body as { prompt: string }).prompt);
    expect(prompts.sort()).toEqual(['help page for SSO is wrong', 'list the env vars on the config page']);
  });

  it('typed in the bot’s own DM, `help` describes `status` as it works there (the person’s own jobs), not as “this channel’s”', async () => {
    h = await startBot();
    const dm = h.slack.dmWith('U0ADA');
    const help = await h.command('help', { channel_id: dm, user_id: 'U0ADA' });
    const text = String((help.json as { text: string }).text);
    expect(text).toContain('/docs-agent status');
    // In the DM, `/docs-agent status` answers “Your recent docs agent jobs”: the help must not send the
    // person to it for “this channel’s recent jobs”, nor say the digest is posted “in this channel”.
    expect(text).not.toContain('this channel’s recent jobs');
    expect(text).not.toContain('posted in this channel');
    expect(text).toContain('`/docs-agent status` in a direct message: your recent jobs');
    // The same help follows “tell me what to change” when nothing was typed.
    const empty = await h.command('', { channel_id: dm, user_id: 'U0ADA' });
    expect(String((empty.json as { text: string }).text)).not.toContain('this channel’s recent jobs');
  });

  it('reads `help?` and `status.` as the subcommands they are', async () => {
    h = await startBot();
    const help = await h.command('help?');
    expect(help.json).toMatchObject({ text: expect.stringContaining('How to use') });
    await h.command('Status.');
    const { args } = await h.slack.waitForCall('response_url');
    expect(String(args.text)).toContain('No docs agent jobs in this channel yet');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(0);
  });

  it('reads `status please` and `hi, digest?` as the subcommands, as a mention or a DM reads them, starting no job', async () => {
    h = await startBot();
    await h.command('status please', { response_url: h.slack.responseUrl('status') });
    await h.bot.drained();
    // Not a public card for a job called “status please”, spending one of the hour’s agent uses.
    expect(h.mintlify.requestsFor('createJob').map((request) => request.body)).toEqual([]);
    const listed = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    expect(String(listed.args.text)).toContain('No docs agent jobs in this channel yet');
    const digest = await h.command('hi, digest?');
    expect(digest.json).toMatchObject({ text: expect.stringContaining('Gathering the docs digest') });
  });

  it('lists this channel’s recent jobs with `status`, to the person alone', async () => {
    h = await startBot();
    await h.command('Document the CLI', { channel_id: 'C0DOCS' });
    await h.slack.waitForCall('chat.postMessage');
    await h.command('Document the API', { channel_id: 'C0OTHER' });
    await h.slack.waitForCalls('chat.postMessage', 2);

    const res = await h.command('status', {
      channel_id: 'C0DOCS',
      response_url: h.slack.responseUrl('status'),
    });
    expect(res.body).toBe('');
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    expect(answer.args.response_type).toBe('ephemeral');
    const shown = blocksText(answer.args.blocks);
    expect(shown).toContain('Document the CLI');
    expect(shown).not.toContain('Document the API');
    expect(shown).toContain('https://slack.com/archives/C0DOCS/p');
  });

  it('typed in the bot’s own DM, `status` lists the person’s jobs, as `status` said in that DM does', async () => {
    h = await startBot();
    await h.command('Document the CLI', { channel_id: 'C0DOCS', user_id: 'U0ADA' });
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();

    // The Messages tab of the app: the DM between the person and the bot.
    const dm = h.slack.dmWith('U0ADA');
    await h.command('status', {
      channel_id: dm,
      user_id: 'U0ADA',
      response_url: h.slack.responseUrl('status'),
    });
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    // Not "No docs agent jobs in this channel yet. Start one with /docs-agent …" to someone who has one.
    expect(blocksText(answer.args.blocks)).toContain('Document the CLI');
  });

  it('lists a job with a long instruction on a short line of its own, its links kept after it', async () => {
    h = await startBot();
    // Each & is five characters once escaped: the instruction (600 characters kept) would fill Slack's 3,000.
    await h.command(`Document ${'&amp;'.repeat(700)}`, { channel_id: 'C0DOCS' });
    await h.slack.waitForCall('chat.postMessage');

    await h.command('status', { channel_id: 'C0DOCS', response_url: h.slack.responseUrl('status') });
    const answer = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    const [, line] = answer.args.blocks as Block[];
    expect(line?.text?.text).toMatch(/^:hourglass_flowing_sand: Working on it {2}“Document (&amp;)+…”\n/);
    expect(line?.text?.text).toContain('|thread>');
  });

  it('refuses a signature that does not match, and a stale timestamp', async () => {
    h = await startBot();
    expect((await h.command('Document X', {}, { badSignature: true })).status).toBe(401);
    expect((await h.command('Document X', {}, { staleTimestamp: true })).status).toBe(401);
    // The log says what to check for each.
    expect(h.logs.filter((line) => line.includes('check SLACK_SIGNING_SECRET'))).toHaveLength(1);
    expect(h.logs.filter((line) => line.includes("check this machine's clock"))).toHaveLength(1);
    expect(h.logs.join('\n')).not.toContain(SECRETS.signingSecret);
    expect(h.mintlify.requests).toHaveLength(0);
  });

  it('says once, plainly, when a request comes from another app than the bot token’s', async () => {
    h = await startBot();
    await h.slack.waitForCall('bots.info'); // the bot learns its app just after it starts
    // Another workspace alone is no sign of it: a Slack Connect partner acts from theirs.
    await h.command('Document W', { team_id: 'T0PARTNER' });
    const other = { api_app_id: 'A0DEVAPP' };
    await h.command('Document X', other);
    await h.command('Document Y', other);
    await h.slack.waitForCalls('chat.postMessage', 3);
    const said = h.logs.filter((line) => line.includes('belong to different apps'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("app A0DEVAPP, while SLACK_BOT_TOKEN is app A0APP's");
    expect(said[0]).toContain('SLACK_SIGNING_SECRET (or SLACK_APP_TOKEN) and SLACK_BOT_TOKEN');
  });

  it('says nothing of another app when Slack would not tell the bot its own app', async () => {
    const slack = await startSlackFake({ botToken: SECRETS.botToken });
    try {
      slack.failNext('bots.info', { error: 'bot_not_found' });
      h = await startBot({ slack });
      await h.slack.waitForCall('bots.info');
      await h.command('Document X', { api_app_id: 'A0APP' });
      await h.slack.waitForCalls('chat.postMessage', 1);
      expect(h.logs.filter((line) => line.includes('belong to different apps'))).toEqual([]);
    } finally {
      await h?.close();
      await slack.close();
    }
  });

  it('says where Slack’s requests go when one comes to another path (a Request URL typed wrong)', async () => {
    h = await startBot();
    const wrong = await fetch(`${h.url}/slack/event`, { method: 'POST', body: 'token=x' });
    expect(wrong.status).toBe(404);
    const said = h.logs.filter((line) => line.includes('Unhandled HTTP request (POST) made to /slack/event'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/warn/i);
    expect(said[0]).toContain("Slack's requests go to POST /slack/events");
  });

  it('politely refuses people and channels outside the allowlists, sending nothing to Mintlify', async () => {
    h = await startBot({ env: { ALLOWED_USER_IDS: 'U0ADA', ALLOWED_CHANNEL_IDS: 'C0DOCS' } });
    const stranger = await h.command('Document X', { user_id: 'U0EVE', channel_id: 'C0DOCS' });
    expect(stranger.json).toMatchObject({ text: expect.stringContaining('only available to some people') });
    const elsewhere = await h.command('Document X', { user_id: 'U0ADA', channel_id: 'C0RANDOM' });
    expect(elsewhere.json).toMatchObject({ text: expect.stringContaining('isn’t enabled in this channel') });
    await h.bot.drained();
    expect(h.mintlify.requests).toHaveLength(0);

    await h.command('Document X', { user_id: 'U0ADA', channel_id: 'C0DOCS' });
    await h.slack.waitForCall('chat.postMessage');
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('delivered twice (the same trigger, as a redelivered Socket Mode envelope), starts one job with one card', async () => {
    h = await startBot();
    const fields = { trigger_id: '1800000000.redelivered' };
    await h.command('Document the export flag', fields);
    await h.command('Document the export flag', fields);
    await h.slack.waitForCall('chat.postMessage');
    await h.bot.drained();
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('says how many agent uses are left when few remain', async () => {
    h = await startBot();
    const ledger = new RateLedger(h.bot.store);
    for (let i = 0; i < 95; i += 1) await ledger.recordUse('proj_test', `earlier-${i}`);
    await h.command('Document X');
    const answer = await ephemeral(h);
    // A message of its own: Slack does not replace a slash command's answer.
    expect(answer).toEqual({
      response_type: 'ephemeral',
      text: expect.stringContaining('4 agent uses left'),
    });
  });

  it('says how many agent uses are left from the tenth-to-last on', async () => {
    h = await startBot();
    const ledger = new RateLedger(h.bot.store);
    for (let i = 0; i < 89; i += 1) await ledger.recordUse('proj_test', `earlier-${i}`);
    await h.command('Document X');
    expect((await ephemeral(h)).text).toBe('Job started. 10 agent uses left this hour for this project.');
  });
});

describe('/docs-agent when something goes wrong', () => {
  const failures = [
    ['rate limited with Retry-After', { status: 429, retryAfter: '600' }, 'Try again in 10 minutes'],
    ['rate limited for a minute', { status: 429, retryAfter: '60' }, 'Try again in a minute ('],
    ['rate limited without Retry-After', { status: 429 }, 'Try again within the hour'],
    ['a rejected or expired key', { status: 401 }, 'wrong or has expired'],
    ['a forbidden key', { status: 403 }, 'the key lacks the write scope'],
    ['a service error', { status: 503 }, 'It may have started anyway'],
    // Mintlify's own words, shown as text: they can disguise no link and ping nobody.
    [
      'a request Mintlify refuses',
      { status: 400, body: { error: 'Bad <!here> & <https://evil.example|docs>' } },
      'Mintlify did not accept that (Bad &lt;!here&gt; &amp; &lt;https://evil.example|docs&gt;)',
    ],
    // A 4xx the spec does not list is a refusal too: no job was made.
    [
      'a conflict',
      { status: 409, body: { error: 'a job for <!channel> is running' } },
      'Mintlify refused the request (409: a job for &lt;!channel&gt; is running), so I couldn’t start the job. Nothing was started.',
    ],
    [
      'a redirect',
      { status: 308, headers: { location: 'https://www.mintlify.com/' } },
      'Please ask the person who installed this app to check MINTLIFY_API_URL.',
    ],
  ] as const;

  it.each(failures)(
    'answers %s to the person alone, in plain words, and posts nothing',
    async (_name, fault, says) => {
      h = await startBot();
      h.mintlify.injectFault('createJob', fault);
      await h.command('Document X');
      const answer = await ephemeral(h);
      expect(answer).toEqual({ response_type: 'ephemeral', text: expect.stringContaining(says) });
      expect(String(answer.text)).not.toContain(SECRETS.mintlifyKey);
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(1); // a POST is never retried blindly
      expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    },
  );

  it('rate limited without Retry-After, names the time the oldest of the hour’s agent uses frees one', async () => {
    h = await startBot();
    const ledger = new RateLedger(h.bot.store);
    const firstUse = Date.now();
    for (let i = 0; i < 100; i += 1) await ledger.recordUse('proj_test', `earlier-${i}`);
    h.mintlify.injectFault('createJob', { status: 429 });
    await h.command('Document X');
    const text = String((await ephemeral(h)).text);
    expect(text).toContain('limit of 100 agent uses per hour');
    const at = /Try again after <!date\^(\d+)\^/.exec(text);
    expect(at, text).not.toBeNull();
    // An hour after the first of those uses, as Slack shows it in the reader's time zone.
    const seconds = Number(at?.[1]);
    expect(seconds).toBeGreaterThanOrEqual(Math.floor((firstUse + 3_600_000) / 1000));
    expect(seconds).toBeLessThanOrEqual(Math.ceil((Date.now() + 3_600_000) / 1000));
  });

  it.each([
    ['422 (a validation error)', 422, 'prompt must be at most 20000 characters'],
    ['413 (a body too large for its proxy)', 413, 'Request Entity Too Large'],
  ])(
    'a create Mintlify refused with %s is told as refused, with its words, not as "it may have started anyway"',
    async (_name, status, words) => {
      h = await startBot();
      // Not a status the spec lists for the create, but a 4xx: Mintlify refused it and made no job.
      h.mintlify.injectFault('createJob', { status, body: { error: words } });
      await h.command('Document X');
      const text = String((await ephemeral(h)).text);
      expect(text).not.toContain('may have started anyway');
      expect(text).toContain(words);
    },
  );

  it('a redirect tells the operator MINTLIFY_API_URL is not the API, and where it pointed', async () => {
    h = await startBot();
    h.mintlify.injectFault('createJob', { status: 301, headers: { location: 'https://www.mintlify.com/' } });
    await h.command('Document X');
    const text = String((await ephemeral(h)).text);
    expect(text).toContain('Nothing was started.');
    expect(text).not.toContain('may have started anyway');
    const logged = h.logs.filter((line) => line.includes('could not start a job'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('redirect (301 to https://www.mintlify.com/)');
    expect(logged[0]).toContain('check MINTLIFY_API_URL');
  });

  it('a job Mintlify created but named no id for: the person is told it started, not to try again', async () => {
    h = await startBot();
    // No field of AgentJob is required by the spec.
    h.mintlify.injectFault('createJob', { status: 201, body: { status: 'active' } });
    await h.command('Document X');
    const answer = await ephemeral(h);
    expect(String(answer.text)).toContain('Mintlify started the job but did not say which one');
    expect(String(answer.text)).not.toContain('try again');
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('answers a timeout honestly: the job may have started', async () => {
    h = await startBot({ mintlifyOptions: { timeouts: { headersMs: 200 } } });
    // Far past the timeout, so that a timer late on a busy machine still fires before the answer comes.
    h.mintlify.injectFault('createJob', { delayMs: 10_000 });
    await h.command('Document X');
    const answer = await ephemeral(h);
    expect(String(answer.text)).toContain('did not answer in time');
    expect(String(answer.text)).toContain('It may have started anyway');
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });

  it('where Mintlify cannot be reached at all, tells the person so, and the log says what to check on this machine', async () => {
    // Nothing listens on port 9 here: every try is refused before a request goes out.
    h = await startBot({ env: { MINTLIFY_API_URL: 'http://127.0.0.1:9' } });
    await h.command('Document X');
    const answer = await ephemeral(h);
    expect(String(answer.text)).toContain('I couldn’t reach Mintlify');
    await expect
      .poll(() =>
        h.logs.filter(
          (line) => line.includes('could not start a job') && line.includes('firewall, proxy or DNS'),
        ),
      )
      .toHaveLength(1);
  });

  it('moves a job started in a channel the bot is not in to the person’s DM, and follows it there', async () => {
    h = await startBot({ env: { ...FAST_POLL } });
    h.slack.setBotMember('C0NOTIN', false);
    await h.command('Document X', { channel_id: 'C0NOTIN' });
    const answer = await ephemeral(h);
    expect(String(answer.text)).toContain('it is in our DM');
    expect(String(answer.text)).toContain('/invite @docs-agent');

    const dmCard = await h.slack.waitForCall('chat.postMessage', (call) => call.args.channel === 'U0USER');
    expect(dmCard.response.ok).toBe(true);
    const note = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === dmCard.response.ts,
    );
    expect(String(note.args.text)).toContain('<#C0NOTIN>');
    const cardTs = String(dmCard.response.ts);
    expect(await new JobRecords(h.bot.store).get('job-1')).toMatchObject({
      channel: String(dmCard.response.channel),
      threadTs: cardTs,
      cardTs,
    });
    // The requester's Home tab links the job's thread in the DM.
    await expect
      .poll(() => JSON.stringify(h.slack.callsTo('views.publish').at(-1)?.args.view ?? ''))
      .toContain(`archives/${String(dmCard.response.channel)}/p`);
    // Its instruction, typed where only its author saw it, is not listed to the channel.
    await h.command('status', {
      channel_id: 'C0NOTIN',
      user_id: 'U0BEA',
      response_url: h.slack.responseUrl('status'),
    });
    const list = await h.slack.waitForCall('response_url', (call) => call.responseId === 'status');
    expect(JSON.stringify(list.args)).not.toContain('Document X');
    // The job's end is told in its DM thread.
    h.mintlify.setJob('job-1', { status: 'completed', prLink: 'https://github.com/acme/docs/pull/7' });
    await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.args.thread_ts === cardTs && String(call.args.text).includes('pull/7'),
    );
  });

  it('lists a channel’s jobs as far as it has them, when its newest jobs’ cards moved elsewhere', async () => {
    h = await startBot();
    const records = new JobRecords(h.bot.store);
    const job = (index: number, channel: string) => ({
      jobId: `job-list-${index}`,
      projectId: 'proj_test',
      channel,
      threadTs: `1800000${index}.000100`,
      cardTs: `1800000${index}.000100`,
      requestedBy: 'U0ADA',
      prompt: `Listed job ${index}`,
      door: 'command' as const,
      status: 'completed' as const,
      prLink: null,
      repository: null,
      ref: null,
      model: null,
      createdAt: new Date(Date.UTC(2026, 10, 1, index)).toISOString(),
      updatedAt: new Date(Date.UTC(2026, 10, 1, index)).toISOString(),
      finishedAt: null,
      round: 0,
      announced: [],
    });
    for (let index = 0; index < 12; index += 1) await records.save(job(index, 'C0LIST'));
    // The eleven newest moved to their requester's DM (the channel refused their cards).
    for (let index = 1; index < 12; index += 1) await records.save(job(index, 'D0ADA'));

    await h.command('status', { channel_id: 'C0LIST', response_url: h.slack.responseUrl('status') });
    const list = JSON.stringify((await h.slack.waitForCall('response_url')).args);
    expect(list).toContain('Listed job 0');
    expect(list).not.toContain('Listed job 1');
  });

  it('says the card is in the DM even when Redis misses the move, and records it once Redis answers', async () => {
    h = await startBot({ env: { ...FAST_POLL }, recordAgainEveryMs: 100 });
    const { records } = h.bot.context.jobs;
    const update = records.update.bind(records);
    let missed = 0;
    const dmCards = () =>
      h.slack.callsTo('chat.postMessage').filter((call) => call.args.channel === 'U0USER');
    // The write that moves the record to the DM gets no answer from Redis, once.
    vi.spyOn(records, 'update').mockImplementation(async (jobId, change) => {
      const current = await records.get(jobId);
      const moves = current !== undefined && change(current).channel !== current.channel;
      if (moves && missed++ === 0) throw new StoreTimeoutError('an update', 5_000);
      return update(jobId, change);
    });
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    await h.command('Document X', { channel_id: 'C0NOTIN' });
    expect(String((await ephemeral(h)).text)).toContain('it is in our DM');
    const cardTs = String(dmCards()[0]?.response.ts);
    await expect.poll(async () => (await records.get('job-1'))?.cardTs).toBe(cardTs);
    expect(missed).toBe(2); // refused, then written
    expect(h.logs.some((line) => line.includes('its record says so once Redis answers'))).toBe(true);
    expect(dmCards()).toHaveLength(1);
  });

  it('in a channel where the bot is a member but may not post (announcement-only), does not tell the person to invite it', async () => {
    h = await startBot();
    // Slack's answer where posting is limited to admins: the bot is in the channel already.
    h.slack.failNext('chat.postMessage', { error: 'restricted_action' });
    await h.command('Document X', { channel_id: 'C0DOCS' });
    const answer = String((await ephemeral(h)).text);
    expect(answer).toContain('in our DM');
    const note = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('following the job here'),
    );
    // “/invite @docs-agent” there only gets “already in this channel”: the words name the wrong cause.
    expect(answer).not.toContain('/invite @docs-agent');
    expect(String(note.args.text)).not.toContain('/invite @docs-agent');
    // Said as it is: Slack does not let the bot post there.
    expect(answer).toContain('Slack doesn’t let me post its card in this channel');
    expect(String(note.args.text)).toMatch(/^Slack doesn’t let me post in <#C0DOCS>/);
  });

  it('in a direct message between people, says the card is in our DM as the note beside it does, without telling the person to invite the bot', async () => {
    h = await startBot();
    // No app can be added to a DM between people: Slack answers as for a conversation it does not know.
    h.slack.failNext('chat.postMessage', { error: 'channel_not_found', channel: 'D0PEOPLE' });
    await h.command('Document the export flag', { channel_id: 'D0PEOPLE', user_id: 'U0ADA' });
    const answer = String((await ephemeral(h)).text);
    expect(answer).toContain('in our DM');
    const note = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('following the job here'),
    );
    expect(String(note.args.text)).toMatch(/^I can’t post in a direct message between other people/);
    // Read first, the answer says the same: not to invite the bot, nor that it is "probably not a
    // member", where no app can ever be one.
    expect(answer).toMatch(/^Job started\. I can’t post its card in a direct message between other people/);
    expect(answer).not.toContain('/invite');
    expect(answer).not.toContain('probably not a member');
  });

  it('where the app is not granted in the channel’s workspace (Enterprise Grid), says that may be why, not only that posting there is restricted or archived', async () => {
    h = await startBot();
    h.slack.failNext('chat.postMessage', { error: 'team_access_not_granted' });
    await h.command('Document X', { channel_id: 'C0DOCS' });
    const answer = String((await ephemeral(h)).text);
    expect(answer).toContain('in our DM');
    const note = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('following the job here'),
    );
    // The channel may be neither restricted nor archived: the app may lack access to its workspace.
    expect(answer).toContain('or this app is not allowed in its workspace');
    expect(String(note.args.text)).toContain('or this app is not allowed in its workspace');
  });

  it('keeps a job whose card neither the channel nor the DM takes, and says where to see it', async () => {
    h = await startBot();
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' }, 2);
    await h.command('Document X', { channel_id: 'C0NOTIN' });
    const answer = await ephemeral(h);
    expect(String(answer.text)).toContain('job-1');
    expect(String(answer.text)).toContain('Home tab');
    expect(await new JobRecords(h.bot.store).get('job-1')).toMatchObject({
      jobId: 'job-1',
      channel: 'C0NOTIN',
      threadTs: null,
    });
  });
});
