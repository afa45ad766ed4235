import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerFixWithAgent } from './fixWithAgent.js';

/** Link buttons open in the browser, but Slack still sends the click: acknowledge it. */
export function register(app: App, ctx: ListenerContext): void {
  registerFixWithAgent(app, ctx);
  app.action('open_pull_request', async ({ ack }) => {
    await ack();
  });
  app.action('open_preview', async ({ ack }) => {
    await ack();
  });
}
