import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerAppHomeOpened } from './appHomeOpened.js';
import { registerAppMention } from './appMention.js';
import { registerDirectMessage } from './directMessage.js';
import { registerEventShape } from './eventShape.js';
import { registerThreadReply } from './threadReply.js';

export function register(app: App, ctx: ListenerContext): void {
  registerEventShape(app); // first: a malformed event reaches no door
  registerThreadReply(app, ctx);
  registerAppMention(app, ctx);
  registerDirectMessage(app, ctx);
  registerAppHomeOpened(app, ctx);
}
