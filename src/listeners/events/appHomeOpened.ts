import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { ListenerContext } from '../context.js';

type HomeOpenedArgs = SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs;

/** Opening the bot's Home tab shows that person's jobs, the budget, the digest and how to use the bot. */
export function appHomeOpened(ctx: ListenerContext) {
  return async ({ event, body }: HomeOpenedArgs): Promise<void> => {
    if (event.tab !== 'home') return; // the Messages tab is the DM
    await ctx.enqueue({ kind: 'home_opened', user: event.user }, body.event_id);
  };
}

export function registerAppHomeOpened(app: App, ctx: ListenerContext): void {
  app.event('app_home_opened', appHomeOpened(ctx));
}
