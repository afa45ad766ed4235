import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createLogger } from '../src/log.js';
import { BOT_SCOPES, verifySlackToken } from '../src/slack/slackIdentity.js';
import { type SlackFake, startSlackFake } from './fakes/slackFake.js';
import { type BotHarness, SECRETS, startBot } from './support/botHarness.js';

const manifest = parse(readFileSync(new URL('../manifest.yml', import.meta.url), 'utf8')) as {
  oauth_config: { scopes: { bot: string[] } };
};

const harnesses: BotHarness[] = [];
const fakes: SlackFake[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** The bot, in memory, against a Slack whose token was granted `scopes`. */
async function startWithScopes(scopes: string[]): Promise<BotHarness> {
  const slack = await startSlackFake({ botToken: SECRETS.botToken, scopes });
  fakes.push(slack); // a Slack fake given to the harness is the test's to close
  const h = await startBot({ slack, memory: true });
  harnesses.push(h);
  await expect.poll(() => h.logs.some((line) => line.includes('connected to Slack workspace'))).toBe(true);
  return h;
}

describe('the bot token’s scopes at start', () => {
  it('the bot’s list of scopes is manifest.yml’s', () => {
    expect([...BOT_SCOPES].sort()).toEqual([...manifest.oauth_config.scopes.bot].sort());
  });

  it('a token installed from an older manifest is told at start, once, naming the scopes it lacks', async () => {
    const granted = BOT_SCOPES.filter((scope) => scope !== 'im:history' && scope !== 'reactions:write');
    const h = await startWithScopes(granted);
    const warned = h.logs.filter((line) => line.includes('SLACK_BOT_TOKEN lacks'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/WARN/);
    expect(warned[0]).toContain(
      'SLACK_BOT_TOKEN lacks reactions:write, im:history: update the app from manifest.yml and reinstall it',
    );
  });

  it('a token with every scope of the manifest (and more) is not warned about', async () => {
    const h = await startWithScopes([...BOT_SCOPES, 'im:write']);
    expect(h.logs.filter((line) => line.includes('lacks'))).toEqual([]);
  });

  it.each([
    ['no scopes (a proxy that drops x-oauth-scopes)', undefined],
    ['an empty x-oauth-scopes', ''],
  ])('says nothing when the answer carries %s', async (_case, header) => {
    const server = createServer((_request, response) => {
      response.writeHead(200, {
        'content-type': 'application/json',
        ...(header === undefined ? {} : { 'x-oauth-scopes': header }),
      });
      response.end(
        JSON.stringify({ ok: true, team: 'T', team_id: 'T1', user: 'bot', user_id: 'U1', bot_id: 'B1' }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const lines: string[] = [];
      const logger = createLogger({ level: 'debug', secrets: [], sink: (line) => lines.push(line) });
      const client = new webApi.WebClient(SECRETS.botToken, { slackApiUrl: `http://127.0.0.1:${port}/api/` });
      expect(await verifySlackToken(client, logger)).toEqual({ botUserId: 'U1', botId: 'B1' });
      expect(lines.filter((line) => line.includes('lacks'))).toEqual([]);
    } finally {
      server.close();
    }
  });

  it.each(['invalid_auth', 'not_authed', 'token_revoked'])(
    'a token Slack refuses at start (%s) stops it, saying where to copy the right one',
    async (code) => {
      const slack = await startSlackFake({ botToken: SECRETS.botToken });
      fakes.push(slack);
      slack.failNext('auth.test', { error: code });
      const client = new webApi.WebClient(SECRETS.botToken, { slackApiUrl: slack.apiUrl });
      const logger = createLogger({ level: 'debug', secrets: [], sink: () => {} });
      await expect(verifySlackToken(client, logger)).rejects.toThrow(
        `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions" after installing the app`,
      );
    },
  );
});
