/**
 * Slack's Socket Mode, as the fake serves it: `apps.connections.open` (app-level token) answers a
 * WebSocket URL on the fake; the bot connects, gets `hello`, and each envelope the test sends is
 * acknowledged by the bot with its `envelope_id` (and, for commands, the ack's payload).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

export interface SocketModeAck {
  envelope_id: string;
  payload?: unknown;
}

export class SocketModeServer {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<WebSocket>();
  /** Each connection's own TCP socket, under its WebSocket. */
  private readonly wires = new Map<WebSocket, Duplex>();
  private readonly acks = new Map<string, (ack: SocketModeAck) => void>();
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly baseWsUrl: string) {}

  /** The tickets in the URLs `apps.connections.open` answered, as Slack's carry one (it opens the connection). */
  readonly tickets: string[] = [];

  /** The URL `apps.connections.open` answers. */
  connectionUrl(): string {
    const ticket = randomUUID();
    this.tickets.push(ticket);
    return `${this.baseWsUrl}/socket/link/?ticket=${ticket}&app_id=A0APP`;
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      this.sockets.add(ws);
      this.wires.set(ws, socket);
      ws.on('close', () => {
        this.sockets.delete(ws);
        this.wires.delete(ws);
      });
      ws.on('message', (data) => {
        const ack = JSON.parse(String(data)) as SocketModeAck;
        this.acks.get(ack.envelope_id)?.(ack);
      });
      ws.send(JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0APP' } }));
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolves once a client is connected. */
  connected(): Promise<void> {
    if (this.sockets.size > 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends an envelope (`slash_commands`, `events_api`, `interactive`) and resolves with the bot's ack. */
  send(type: string, payload: unknown, timeoutMs = 5_000): Promise<SocketModeAck> {
    const [socket] = this.sockets;
    if (!socket) return Promise.reject(new Error('Socket Mode: no client is connected'));
    const envelopeId = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Socket Mode: no ack for ${type}`)), timeoutMs);
      this.acks.set(envelopeId, (ack) => {
        clearTimeout(timer);
        resolve(ack);
      });
      socket.send(
        JSON.stringify({
          envelope_id: envelopeId,
          type,
          payload,
          accepts_response_payload: type !== 'events_api',
        }),
      );
    });
  }

  /**
   * Drops every connection, as a network blip or Slack's own restart does (the client opens a new
   * one with `apps.connections.open`); resolves once they are closed.
   */
  async dropConnections(): Promise<void> {
    const closing = [...this.sockets].map((socket) => once(socket, 'close'));
    for (const socket of this.sockets) socket.terminate();
    await Promise.all(closing);
  }

  /**
   * Slack's side stops reading every connection, as over a link gone half open: the bot's frames
   * (its close included) get no answer, while the connection stays up.
   */
  goQuiet(): void {
    for (const wire of this.wires.values()) wire.pause();
  }

  close(): void {
    for (const socket of this.sockets) socket.terminate();
    this.wss.close();
  }
}
