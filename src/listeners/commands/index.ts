import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerDocsAgentCommand } from './docsAgentCommand.js';

export function register(app: App, ctx: ListenerContext): void {
  registerDocsAgentCommand(app, ctx);
}
