import { connect, type Socket } from 'node:net';
import { expect, vi } from 'vitest';
import { SECRETS } from './botHarness.js';
import { signRequest } from './slackRequests.js';

/**
 * Slack's requests over one raw, kept-alive HTTP/1.1 connection, as a load balancer or proxy in
 * front of the bot sends them: a request can be caught half-sent when a signal comes.
 */

/** A signed `/docs-agent <text>` as one HTTP/1.1 request on a kept-alive connection. */
export function slashCommand(
  port: number,
  text: string,
  responseUrl: string,
  triggerId: string,
  headers: string[] = [],
): { head: string; body: string } {
  const body = new URLSearchParams({
    token: 'deprecated-verification-token',
    team_id: 'T0TEAM',
    team_domain: 'acme',
    channel_id: 'C0CHANNEL',
    channel_name: 'docs',
    user_id: 'U0USER',
    user_name: 'ada',
    command: '/docs-agent',
    text,
    api_app_id: 'A0APP',
    response_url: responseUrl,
    trigger_id: triggerId,
  }).toString();
  const signature = signRequest(SECRETS.signingSecret, body);
  const head = [
    'POST /slack/events HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'Connection: keep-alive',
    'Content-Type: application/x-www-form-urlencoded',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Slack-Signature: ${signature['x-slack-signature']}`,
    `X-Slack-Request-Timestamp: ${signature['x-slack-request-timestamp']}`,
    ...headers,
    '',
    '',
  ].join('\r\n');
  return { head, body };
}

/**
 * Sends a command's head and waits for the bot's "100 Continue": the request is under way (the
 * server holds it as running, not idle) but its body is still to come.
 */
export async function halfSent(
  connection: ReturnType<typeof keptAlive>,
  text: string,
  responseUrl: string,
): Promise<{ finish(): void }> {
  const { head, body } = slashCommand(connection.port, text, responseUrl, '1.1.a', ['Expect: 100-continue']);
  connection.socket.write(head);
  await vi.waitFor(() => expect(connection.raw()).toContain('100 Continue'), { timeout: 5_000 });
  return { finish: () => connection.socket.write(body) };
}

const opened: Socket[] = [];

/** Destroys the connections `keptAlive` opened (for afterEach). */
export function closeKeptAlive(): void {
  for (const socket of opened.splice(0)) socket.destroy();
}

/** A raw connection to the bot at `url`; `answers` are its final answers so far, in order. */
export function keptAlive(url: string): { socket: Socket; port: number; raw(): string; answers(): string[] } {
  const port = Number(new URL(url).port);
  const socket = connect(port, '127.0.0.1');
  opened.push(socket);
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('utf8')));
  socket.on('error', () => {});
  return {
    socket,
    port,
    raw: () => received,
    // Final answers only: not the interim "100 Continue".
    answers: () =>
      received
        .split('HTTP/1.1 ')
        .slice(1)
        .filter((answer) => !answer.startsWith('100 ')),
  };
}
