import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { ListenerContext } from '../context.js';

type HomeOpenedArgs = SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs;

/** Opening the bot's Home tab shows that person's jobs, the budget, the digest and how to use the bot. */
export function registerAppHomeOpened(app: App, ctx: ListenerContext): void {
  app.event('app_home_opened', async ({ event }: HomeOpenedArgs) => {
    if (event.tab !== 'home') return; // the Messages tab is the DM
    await ctx.home.publishNow(event.user);
  });
}
