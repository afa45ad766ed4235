import { afterEach, describe, expect, it } from 'vitest';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';
import { sendInteraction } from '../support/slackRequests.js';

let h: BotHarness;
afterEach(async () => h?.close());

const BUSY = /very busy right now and did not start anything/;

/** A bot that counts itself busy from 2 unfinished requests on, with Mintlify slow to create jobs. */
async function slowBot() {
  h = await startBot({ busyBacklog: 2 });
  h.mintlify.injectFault('createJob', { delayMs: 1_500 }, 2);
  await Promise.all([h.command('Document the first flag'), h.command('Document the second flag')]);
  await expect.poll(() => h.mintlify.requestsFor('createJob').length).toBe(2);
  return h;
}

describe('a bot with more work waiting than it should take on', () => {
  it('refuses new commands at once in plain words, starts nothing for them, and takes them again once it has caught up', async () => {
    await slowBot();

    const refused = await h.command('Document the third flag');
    expect(refused.status).toBe(200);
    expect(refused.json).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(BUSY) });
    // Help needs no work, so it is still answered in full.
    expect((await h.command('help')).json).toMatchObject({ text: expect.stringContaining('/docs-agent') });
    expect(
      h.logs.some((line) => /WARN .*2 requests are waiting for work: new jobs are refused/.test(line)),
    ).toBe(true);

    // The two slow jobs finish: their cards are posted, and new commands start jobs again.
    await expect.poll(() => h.slack.callsTo('chat.postMessage').length, { timeout: 5_000 }).toBe(2);
    await expect
      .poll(async () => ((await h.command('Document the fourth flag')).json as { text?: string }).text)
      .toMatch(/Starting/);
    await expect.poll(() => h.slack.callsTo('chat.postMessage').length).toBe(3);
    const prompts = h.mintlify.requestsFor('createJob').map((r) => (r.body as { prompt: string }).prompt);
    expect(prompts).toEqual([
      'Document the first flag',
      'Document the second flag',
      'Document the fourth flag',
    ]);
    expect(h.logs.some((line) => /INFO .*the work has caught up/.test(line))).toBe(true);
  });

  it('keeps the “Send to docs agent” form open with the reason, so the person can send it again later', async () => {
    await slowBot();
    const message = h.slack.seedMessage('C0DOCS', { user: 'U0ADA', text: 'Export now writes CSV' });
    const submitted = await sendInteraction(h.url, SECRETS.signingSecret, {
      type: 'view_submission',
      team: { id: 'T0TEAM', domain: 'acme' },
      user: { id: 'U0USER', name: 'user', team_id: 'T0TEAM' },
      api_app_id: 'A0APP',
      token: 'deprecated',
      trigger_id: '3333.4444.efgh',
      view: {
        id: 'V0FORM',
        type: 'modal',
        callback_id: 'send_to_docs_agent_form',
        private_metadata: JSON.stringify({
          channel: 'C0DOCS',
          ts: message.ts,
          text: message.text,
          files: [],
        }),
        hash: '1.abc',
        state: {
          values: { instruction: { instruction_input: { type: 'plain_text_input', value: 'Doc it' } } },
        },
      },
    });
    expect(submitted.json).toMatchObject({
      response_action: 'errors',
      errors: { instruction: expect.stringMatching(BUSY) },
    });
    await expect.poll(() => h.slack.callsTo('chat.postMessage').length, { timeout: 5_000 }).toBe(2);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(2);
  });
});
