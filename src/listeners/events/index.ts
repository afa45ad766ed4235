import type { App } from '@slack/bolt';
import type { ListenerContext } from '../context.js';
import { registerThreadReply } from './threadReply.js';

export function register(app: App, ctx: ListenerContext): void {
  registerThreadReply(app, ctx);
}
