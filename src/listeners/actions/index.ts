import type { App } from '@slack/bolt';

/** Link buttons open in the browser, but Slack still sends the click: acknowledge it. */
export function register(app: App): void {
  app.action('open_pull_request', async ({ ack }) => {
    await ack();
  });
  app.action('open_preview', async ({ ack }) => {
    await ack();
  });
}
