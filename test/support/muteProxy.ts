import { once } from 'node:events';
import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a Redis that can go mute: connections stay open, but nothing passes
 * either way (a stuck proxy, a partition) until it speaks again, when what was held flows on.
 * With `delayMs`, every command reaches Redis that much later, in order: a Redis far away, where
 * each round trip takes at least `delayMs`.
 */
export interface MuteProxy {
  url: string;
  mute(): void;
  speak(): void;
  /**
   * The next command whose bytes hold `marker` reaches Redis, which runs it, but its connection is
   * cut before the reply comes back (a failover, a proxy reset): the client never hears the answer.
   */
  cutAfter(marker: string): void;
  close(): Promise<void>;
}

export async function startMuteProxy(
  target: { port: number },
  options: { delayMs?: number } = {},
): Promise<MuteProxy> {
  const { delayMs = 0 } = options;
  const sockets = new Set<Socket>();
  let muted = false;
  let cutMarker: string | undefined;
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(target.port, '127.0.0.1');
    client.on('data', (chunk: Buffer) => {
      if (cutMarker === undefined || !chunk.includes(cutMarker)) return;
      cutMarker = undefined;
      upstream.unpipe(client); // the reply goes nowhere
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
      }, 50);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      if (muted) socket.pause();
    }
    if (delayMs > 0) {
      // Each chunk as it came, delayMs later: the same delay for all keeps them in order.
      client.on('data', (chunk: Buffer) => {
        setTimeout(() => {
          if (!upstream.destroyed) upstream.write(chunk);
        }, delayMs);
      });
      client.on('end', () => setTimeout(() => upstream.end(), delayMs));
    } else {
      client.pipe(upstream);
    }
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    mute() {
      muted = true;
      for (const socket of sockets) socket.pause();
    },
    speak() {
      muted = false;
      for (const socket of sockets) socket.resume();
    },
    cutAfter(marker) {
      cutMarker = marker;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A server that takes connections and never says a word. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
