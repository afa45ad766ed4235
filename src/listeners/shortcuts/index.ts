import type { App } from '@slack/bolt';
import type { Config } from '../../config.js';
import { registerSendToDocsAgent } from './sendToDocsAgent.js';

/** Registered on the front door's app (see frontDoor.ts): the shortcut's form must open within 3 s. */
export function register(app: App, access: Config['access']): void {
  registerSendToDocsAgent(app, access);
}
