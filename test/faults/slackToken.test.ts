import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { SlackTokenState } from '../../src/slack/slackToken.js';
import { FAST_POLL, startFollowedJob, threadReplies } from '../jobs/followSupport.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';

let h: BotHarness;
afterEach(async () => h?.close());

const creates = (h: BotHarness) => h.mintlify.requestsFor('createJob').length;
const answerTo = async (h: BotHarness, id: string) =>
  (await h.slack.waitForCall('response_url', (call) => call.responseId === id)).args;

describe('Slack refuses the bot’s token while it runs (the app installed again)', () => {
  it('says so once in the log, starts no more jobs at Mintlify, and takes up again once Slack takes the token', async () => {
    h = await startBot();
    // The token is revoked once the start's calls are answered: a refused one would say so itself.
    await h.slack.waitForCall('bots.info');
    h.slack.revokeToken();
    // The first start after the revocation finds out: its job is made, its card refused.
    await h.command('Document the CLI', { response_url: h.slack.responseUrl('first') });
    await answerTo(h, 'first');
    expect(creates(h)).toBe(1);

    await h.command('Document the API', { response_url: h.slack.responseUrl('second') });
    const refused = await answerTo(h, 'second');
    expect(String(refused.text)).toContain('Slack refuses my token');
    expect(String(refused.text)).toContain('Document the API'); // the instruction, to ask again later
    await h.bot.drained();
    expect(creates(h)).toBe(1);
    const said = h.logs.filter((line) => line.includes('Slack refuses SLACK_BOT_TOKEN (token_revoked)'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('Bot User OAuth Token');

    // The new token is in place (here: the old one taken again): the next start asks Slack first.
    h.slack.revokeToken(false);
    await h.command('Document the SDK');
    await h.slack.waitForCall('chat.postMessage', (call) =>
      JSON.stringify(call.args.blocks ?? '').includes('Document the SDK'),
    );
    expect(creates(h)).toBe(2);
    expect(h.logs.filter((line) => line.includes('Slack takes SLACK_BOT_TOKEN again'))).toHaveLength(1);
  });

  it('while jobs are followed, says the refusal once, not a line per job at every check, and tells their ends once Slack takes the token', async () => {
    h = await startBot({ env: FAST_POLL });
    const first = await startFollowedJob(h, 'Document the export command');
    const second = await startFollowedJob(h, 'Document the import command');
    h.slack.revokeToken();
    h.mintlify.setJob(first.jobId, { status: 'completed', prLink: 'https://github.com/acme/docs/pull/1' });
    h.mintlify.setJob(second.jobId, { status: 'completed', prLink: 'https://github.com/acme/docs/pull/2' });
    // Many checks of both jobs, each meeting the refused token.
    await expect.poll(() => h.slack.callsTo('chat.update').length, { timeout: 10_000 }).toBeGreaterThan(10);
    // What an operator reads (Slack's client logs every answer at debug level).
    const refusedLines = h.logs.filter((line) => line.includes('token_revoked') && !line.includes(' DEBUG '));
    expect(refusedLines.filter((line) => line.includes('Slack refuses SLACK_BOT_TOKEN'))).toHaveLength(1);
    expect(refusedLines).toHaveLength(1);

    h.slack.revokeToken(false);
    await expect.poll(() => threadReplies(h, first).length, { timeout: 10_000 }).toBe(1);
    await expect.poll(() => threadReplies(h, second).length, { timeout: 10_000 }).toBe(1);
    expect(h.logs.filter((line) => line.includes('Slack takes SLACK_BOT_TOKEN again'))).toHaveLength(1);
  });

  it('takes an uninstalled app (account_inactive) for a refused token too: said once, and no more jobs made', async () => {
    h = await startBot();
    await h.slack.waitForCall('bots.info');
    h.slack.revokeToken('account_inactive');
    await h.command('Document the CLI', { response_url: h.slack.responseUrl('first') });
    await answerTo(h, 'first');
    expect(creates(h)).toBe(1);
    await h.command('Document the API', { response_url: h.slack.responseUrl('second') });
    expect(String((await answerTo(h, 'second')).text)).toContain('Slack refuses my token');
    await h.bot.drained();
    expect(creates(h)).toBe(1);
    expect(
      h.logs.filter((line) => line.includes('Slack refuses SLACK_BOT_TOKEN (account_inactive)')),
    ).toHaveLength(1);
  });

  it('found refused by another process on the same Redis, no job is made here either: Slack is asked first', async () => {
    h = await startBot();
    await h.slack.waitForCall('bots.info');
    h.slack.revokeToken();
    // Another process with the same token finds it refused (its card refused), and says so on Redis.
    const elsewhere = new SlackTokenState(createLogger({ level: 'error', secrets: [], sink: () => {} }));
    elsewhere.share(h.bot.store, SECRETS.botToken);
    elsewhere.refused('token_revoked');

    // This process has not met the refusal itself: its first start asks Slack before Mintlify.
    await expect.poll(() => h.bot.context.jobs.slackToken?.refusedElsewhere()).toBe(true);
    await h.command('Document the CLI', { response_url: h.slack.responseUrl('first') });
    expect(String((await answerTo(h, 'first')).text)).toContain('Slack refuses my token');
    await h.bot.drained();
    expect(creates(h)).toBe(0);

    // Slack takes the token again: the next start clears the word, and makes its job.
    h.slack.revokeToken(false);
    await h.command('Document the SDK');
    await expect.poll(() => creates(h)).toBe(1);
    await expect.poll(() => h.bot.context.jobs.slackToken?.refusedElsewhere()).toBe(false);
  });
});
