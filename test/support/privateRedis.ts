import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A redis-server of a test's own, on a free port, so a test can take Redis away and bring it
 * back without touching the Redis every other test shares. It keeps nothing on disk by itself
 * (`--save ''`, no AOF); `stop({ keepData: true })` snapshots first, as a Redis with persistence
 * would have, so what the bot wrote is there again after `start()`.
 */
export interface PrivateRedis {
  /** redis:// (or rediss:// when started with `tls`). */
  url: string;
  port: number;
  /** With `tls`: the path of the server's self-signed certificate (PEM), its own CA. */
  certificateFile?: string;
  /** Gone at once: SIGKILL, connections cut. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** Back on the same port (with the data of the last `stop({ keepData: true })`). */
  start(): Promise<void>;
  /** Sends one command (inline protocol) and resolves with the raw reply. */
  command(line: string): Promise<string>;
  close(): Promise<void>;
}

export async function startPrivateRedis(
  /** `args`: more redis-server options (relative paths are in the server's own directory). */
  options: { tls?: boolean; args?: string[] } = {},
): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'docs-agent-redis-'));
  const certificateFile = options.tls ? selfSignedCertificate(dir) : undefined;
  let server: ChildProcess | undefined;
  const send = (line: string) => sendCommand(port, line, certificateFile !== undefined);

  const start = async () => {
    const listen = certificateFile
      ? // TLS only, as hosted Redis offers it: a self-signed certificate, no client certificates.
        ['--port', '0', '--tls-port', String(port), '--tls-cert-file', certificateFile].concat([
          '--tls-key-file',
          join(dir, 'key.pem'),
          '--tls-auth-clients',
          'no',
        ])
      : ['--port', String(port)];
    const child = spawn(
      'redis-server',
      [
        ...listen,
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        ...(options.args ?? []),
      ],
      { stdio: 'ignore' },
    );
    server = child;
    await waitUntil(async () => (await send('PING').catch(() => '')).startsWith('+PONG'), 5_000);
  };
  const stop = async (options: { keepData?: boolean } = {}) => {
    const child = server;
    if (!child || child.exitCode !== null) return;
    if (options.keepData) await send('SAVE');
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    server = undefined;
  };

  await start();
  return {
    url: `${certificateFile ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    ...(certificateFile ? { certificateFile } : {}),
    stop,
    start,
    command: send,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A key and a self-signed certificate for 127.0.0.1 in `dir` (openssl); returns the certificate's path. */
function selfSignedCertificate(dir: string): string {
  const certificate = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1']
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'])
      .concat(['-keyout', join(dir, 'key.pem'), '-out', certificate]),
    { stdio: 'ignore' },
  );
  return certificate;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function sendCommand(port: number, line: string, tls: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls
      ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => socket.write(`${line}\r\n`))
      : new Socket();
    let reply = '';
    socket.setTimeout(2_000, () => socket.destroy(new Error(`Redis on ${port} did not answer ${line}`)));
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.endsWith('\r\n')) {
        socket.end();
        resolve(reply);
      }
    });
    if (!tls) socket.connect(port, '127.0.0.1', () => socket.write(`${line}\r\n`));
  });
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`redis-server did not start within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
