import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { botEnv, processTests, runBot } from '../support/botProcess.js';
import { closeKeptAlive, halfSent, keptAlive, slashCommand } from '../support/keptAlive.js';

/**
 * SIGTERM with Slack's requests arriving over a kept-alive connection, as a load balancer or proxy
 * in front of the bot sends them: the bot is an `npm start` process, the connection a raw socket,
 * so a request can be caught half-sent when the signal comes.
 */

const { startFakes, keep } = processTests({ afterEach: closeKeptAlive });

describe('SIGTERM with requests on a kept-alive connection', () => {
  it('takes no new request once told to stop: one sent after SIGTERM starts no job', async () => {
    const { slack, mintlify } = await startFakes();
    const bot = keep(runBot(botEnv(slack, mintlify)));
    const url = await bot.listening();
    await bot.printed(/docs-agent worker is running/);
    const connection = keptAlive(url);

    // One request is arriving as the signal comes (its body still to send).
    const before = await halfSent(connection, 'Document the import command', slack.responseUrl());
    bot.child.kill('SIGTERM');
    await bot.printed(/SIGTERM received/);
    before.finish();
    await vi.waitFor(() => expect(connection.answers()).toHaveLength(1), { timeout: 5_000 });
    // It was on its way, so it is answered and taken; the answer closes the connection.
    expect(connection.answers()[0]).toMatch(/^200 /);
    expect(connection.answers()[0]).toContain('Starting a docs agent job');
    expect(connection.answers()[0]?.toLowerCase()).toContain('connection: close');

    // Another, on the same connection, after the bot said it takes no new requests.
    const after = slashCommand(connection.port, 'Document the export command', slack.responseUrl(), '2.2.b');
    connection.socket.write(after.head + after.body);
    await bot.exited;
    const prompts = mintlify
      .requestsFor('createJob')
      .map((request) => (request.body as { prompt?: string }).prompt);
    expect(prompts).not.toContainEqual(expect.stringContaining('export command'));
    // Nor was its author told that a job starts.
    expect(connection.answers().slice(1).join('')).not.toContain('Starting a docs agent job');
  });

  it('refuses a request whose head was still arriving at SIGTERM: 503, its connection closed, nothing started', async () => {
    const { slack, mintlify } = await startFakes();
    const bot = keep(runBot(botEnv(slack, mintlify)));
    const url = await bot.listening();
    await bot.printed(/docs-agent worker is running/);
    const connection = keptAlive(url);

    // Its head but for the blank line that ends it: not a request yet, so the signal comes before it is.
    const late = slashCommand(connection.port, 'Document the export command', slack.responseUrl(), '2.2.b');
    if (connection.socket.pending) await once(connection.socket, 'connect');
    await new Promise((resolve) => connection.socket.write(late.head.slice(0, -2), resolve));
    // An answer on another connection: the bot has read what was sent before it asked.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    bot.child.kill('SIGTERM');
    await bot.printed(/SIGTERM received/);
    connection.socket.write(`\r\n${late.body}`);
    await vi.waitFor(() => expect(connection.answers()).toHaveLength(1), { timeout: 5_000 });
    expect(await bot.exited).toBe(0);

    expect(connection.answers()[0]).toMatch(/^503 /);
    expect(connection.answers()[0]?.toLowerCase()).toContain('connection: close');
    expect(mintlify.requestsFor('createJob')).toEqual([]);
  });

  it('a stop is not held back by a kept-alive connection: it exits 0, not at the hard deadline', async () => {
    const { slack, mintlify } = await startFakes();
    const bot = keep(runBot(botEnv(slack, mintlify)));
    const url = await bot.listening();
    await bot.printed(/docs-agent worker is running/);
    const connection = keptAlive(url);

    const first = await halfSent(connection, 'Document the import command', slack.responseUrl());
    bot.child.kill('SIGTERM');
    await bot.printed(/SIGTERM received/);
    first.finish();
    // The client keeps its connection busy, as a proxy under steady traffic does (bounded: 12 requests).
    let sent = 1;
    const more = setInterval(() => {
      if (sent >= 12 || connection.socket.destroyed) return clearInterval(more);
      sent += 1;
      const next = slashCommand(
        connection.port,
        `Document page ${sent}`,
        slack.responseUrl(),
        `${sent}.${sent}.c`,
      );
      connection.socket.write(next.head + next.body);
    }, 700);
    try {
      // 1 is main.ts's hard exit at 9.5 s: the queues never got to hand their work back.
      expect(await bot.exited).toBe(0);
    } finally {
      clearInterval(more);
    }
  });
});
