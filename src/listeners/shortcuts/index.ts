import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerSendToDocsAgent } from './sendToDocsAgent.js';

export function register(app: App, ctx: ListenerContext): void {
  registerSendToDocsAgent(app, ctx);
}
