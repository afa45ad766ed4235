import { describe, expect, it, vi } from 'vitest';
import { botEnv, processTests, runBot } from '../support/botProcess.js';
import { heldStep } from '../support/leases.js';
import { closeKeptAlive, halfSent, keptAlive } from '../support/keptAlive.js';

/**
 * SIGTERM as the bot starts, without Redis: the bot is an `npm start` process, and the request comes
 * over a raw socket, so it can be caught half-sent when the signal comes.
 */

const { startFakes, keep } = processTests({ afterEach: closeKeptAlive });

describe('SIGTERM while Slack still checks the token, without Redis', () => {
  it('works off the request it acknowledged meanwhile (its in-memory queue has no other worker)', async () => {
    const { slack, mintlify } = await startFakes();
    const check = heldStep();
    slack.failNext('auth.test', { until: check.until });
    const bot = keep(runBot(botEnv(slack, mintlify)));
    const url = await bot.listening();
    await vi.waitFor(() => expect(slack.callsTo('auth.test')).toHaveLength(1), { timeout: 10_000 });
    const connection = keptAlive(url);

    const command = await halfSent(connection, 'Document the import command', slack.responseUrl());
    bot.child.kill('SIGTERM');
    await bot.printed(/SIGTERM received/);
    command.finish();
    check.release(); // Slack confirms the token: the command is acknowledged and queued
    await vi.waitFor(() => expect(connection.answers()).toHaveLength(1), { timeout: 5_000 });
    const [answer] = connection.answers();
    expect(answer).toContain('Starting a docs agent job: its card will appear here.');

    expect(await bot.exited).toBe(0);
    // The person was told its card will appear: the job was started (or the ack said otherwise).
    expect(mintlify.requestsFor('createJob')).toHaveLength(1);
  });
});
