import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerSendToDocsAgentForm } from './sendToDocsAgentForm.js';

export function register(app: App, ctx: ListenerContext): void {
  registerSendToDocsAgentForm(app, ctx);
}
