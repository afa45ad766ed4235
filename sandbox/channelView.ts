import type { SlackCall } from '../test/fakes/slackFake.js';
import { messageLines, type SlackMessageContent } from './blockKitText.js';
import { emoji, type MarkupContext } from './slackMarkup.js';
import { stripAnsi, type Terminal } from './terminal.js';

/**
 * What you would see in Slack, as the bot's Web API calls reach the simulated workspace: each
 * top-level message (the bot's and yours, in #docs or in your DM with the bot) gets a number
 * (`#1`), edits show what changed, thread replies are indented under their message's number, and
 * what only you can see is marked `(only you)`. The form the bot opens and the Home tab it
 * publishes are drawn when you use them.
 */

export interface WorkspaceNames {
  /** User id -> name, for `@name`. */
  users: Readonly<Record<string, string>>;
  /** Channel id -> name, for `#name`. */
  channels: Readonly<Record<string, string>>;
  /** The bot's DMs: channel id -> the user id of the person it is with. */
  dms: Readonly<Record<string, string>>;
  botUserId: string;
}

interface Waiter {
  text: string;
  resolve: (seen: boolean) => void;
}

const THREAD_LINK = /^https:\/\/slack\.com\/archives\/([A-Z0-9]+)\/p(\d+)(\d{6})$/;

/** Lines kept for a `wait-for` (a digest is some 60). */
const RECENT_MAX = 500;

export class ChannelView {
  private readonly numbers = new Map<string, number>();
  private readonly messages: Array<{ channel: string; ts: string }> = [];
  /** What each numbered message looks like now, to show only what an edit changed. */
  private readonly drawn = new Map<string, string[]>();
  /** Your replies: `channel:ts` -> the ts of the thread they are in. */
  private readonly yourReplies = new Map<string, string>();
  /** The bot's thread replies (a card under your message, say): `channel:ts` -> their thread's ts. */
  private readonly botReplies = new Map<string, string>();
  private readonly waiters = new Set<Waiter>();
  /** What the bot showed since the command before began, and since this one began (lower case). */
  private earlier: string[] = [];
  private recent: string[] = [];
  private readonly markup: MarkupContext;

  constructor(
    private readonly terminal: Terminal,
    private readonly names: WorkspaceNames,
    now: () => Date = () => new Date(),
  ) {
    this.markup = {
      style: terminal.style,
      now,
      userName: (id) => names.users[id],
      channelName: (id) => names.channels[id],
      linkName: (url) => this.threadLinkName(url),
    };
  }

  private get bot(): string {
    return `@${this.names.users[this.names.botUserId] ?? 'docs-agent'}`;
  }

  /** One Web API call (or response URL post) the bot made; reads are not shown. */
  show(call: SlackCall): void {
    const { args, response } = call;
    // The form (views.open) and the Home tab (views.publish) are drawn when you use them: showForm, showHome.
    const shown = ['chat.postMessage', 'chat.update', 'chat.postEphemeral', 'reactions.add', 'response_url'];
    if (!shown.includes(call.method)) return;
    if (response.ok !== true) {
      this.say(this.terminal.style.dim(`(Slack refused ${call.method}: ${String(response.error)})`));
      return;
    }
    const channel = String(response.channel ?? args.channel ?? '');
    switch (call.method) {
      case 'chat.postMessage':
        return this.posted(channel, String(response.ts), args);
      case 'chat.update':
        return this.edited(channel, String(args.ts), args);
      case 'chat.postEphemeral':
        return this.onlyYou(args, stringOrUndefined(args.thread_ts), channel);
      case 'reactions.add':
        return this.reacted(channel, String(args.timestamp), String(args.name));
      case 'response_url':
        if (args.delete_original === true || args.delete_original === 'true') return;
        return this.onlyYou(args, undefined, undefined);
    }
  }

  /** The bot's immediate answer to a slash command (the body of its acknowledgement), if any. */
  showAnswer(body: unknown): void {
    if (typeof body !== 'object' || body === null) return;
    const content = body as SlackMessageContent;
    if (content.text === undefined && content.blocks === undefined) return;
    this.onlyYou(content, undefined, undefined);
  }

  /** A message you posted at the top level of a channel or your DM: it gets the next number. */
  showYourMessage(you: string, channel: string, ts: string, text: string): void {
    const n = this.number(channel, ts);
    const header = `${this.terminal.style.bold(`#${n}`)} @${you} in ${this.placeName(channel, you)}`;
    // Printed, not said: waiting for the bot's words must not be met by your own.
    this.terminal.print([header, ...text.split('\n').map((line) => `  ${line}`)].join('\n'));
  }

  showYourReply(you: string, channel: string, threadTs: string, ts: string, text: string): void {
    this.yourReplies.set(`${channel}:${ts}`, threadTs);
    this.terminal.print(`  ↳ ${this.threadName(channel, threadTs)} @${you}: ${text}`);
  }

  /** The form the bot opened (`views.open`), or Slack's refusal of it. */
  showForm(call: SlackCall): void {
    const view = call.args.view;
    if (call.response.ok !== true || !isObject(view)) {
      this.say(this.terminal.style.dim(`(Slack refused views.open: ${String(call.response.error)})`));
      return;
    }
    const { bold, dim } = this.terminal.style;
    const buttons = [view.close, view.submit].filter(isObject).map((text) => `[${String(text.text)}]`);
    const lines = [...messageLines(view, this.markup), ...(buttons.length ? [buttons.join(' ')] : [])];
    const title = isObject(view.title) ? String(view.title.text) : 'a form';
    this.say([`${dim('(modal)')} ${bold(title)}`, ...lines.map((line) => `    ${line}`)].join('\n'));
  }

  /** What you did in the form, then how the bot answered its submission. */
  showSubmission(did: string, answer: unknown): void {
    const { dim } = this.terminal.style;
    this.terminal.print(`${dim('(modal)')} ${did}`);
    const errors = isObject(answer) && answer.response_action === 'errors' ? answer.errors : undefined;
    if (!isObject(errors)) return;
    for (const error of Object.values(errors)) this.say(`${dim('(modal)')} ⚠️ ${String(error)}`);
    this.terminal.print(`${dim('(modal)')} you close the form`);
  }

  /** The Home tab the bot published for `you` (`views.publish`), or Slack's refusal of it. */
  showHome(you: string, call: SlackCall): void {
    const view = call.args.view;
    if (call.response.ok !== true || !isObject(view)) {
      this.say(this.terminal.style.dim(`(Slack refused views.publish: ${String(call.response.error)})`));
      return;
    }
    const header = `${this.terminal.style.bold(`${this.bot}’s Home tab`)}, as @${you} sees it`;
    this.say([header, ...messageLines(view, this.markup).map((line) => `  ${line}`)].join('\n'));
  }

  /** The numbered message `n`, to reply in its thread. */
  message(n: number): { channel: string; ts: string } | undefined {
    return this.messages[n - 1];
  }

  numberOf(channel: string, ts: string): number | undefined {
    return this.numbers.get(`${channel}:${ts}`);
  }

  /** A command begins: what the one before it showed stays visible to a `wait-for` that follows it. */
  commandBegins(): void {
    this.earlier = this.recent;
    this.recent = [];
  }

  /**
   * Until the bot shows something containing `text` (any case): true, or false at the timeout; true
   * at once if it did since the command before began (a job may end while that command still waits
   * for the bot to settle). A line found is used up: a second wait for the same text waits anew.
   */
  waitFor(text: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const wanted = text.toLowerCase();
    const shown = [...this.earlier, ...this.recent];
    const at = shown.findIndex((line) => line.includes(wanted));
    if (at >= 0) {
      this.earlier = [];
      this.recent = shown.slice(at + 1);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const done = (seen: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
        this.waiters.delete(waiter);
        if (seen) {
          this.earlier = [];
          this.recent = [];
        }
        resolve(seen);
      };
      const waiter: Waiter = { text: text.toLowerCase(), resolve: done };
      const stop = () => done(false);
      const timer = setTimeout(stop, timeoutMs);
      if (signal?.aborted) return stop();
      signal?.addEventListener('abort', stop, { once: true });
      this.waiters.add(waiter);
    });
  }

  private posted(channel: string, ts: string, args: Record<string, unknown>): void {
    const lines = messageLines(args, this.markup);
    const threadTs = stringOrUndefined(args.thread_ts);
    this.drawn.set(`${channel}:${ts}`, lines);
    if (threadTs && threadTs !== ts) {
      this.botReplies.set(`${channel}:${ts}`, threadTs);
      this.say(indented(`  ↳ ${this.threadName(channel, threadTs)} ${this.bot}: `, lines, '      '));
      return;
    }
    const n = this.number(channel, ts);
    const where = this.placeName(channel, this.names.users[this.names.botUserId] ?? 'docs-agent');
    const header = `${this.terminal.style.bold(`#${n}`)} ${this.bot} in ${where}`;
    this.say([header, ...lines.map((line) => `  ${line}`)].join('\n'));
  }

  private number(channel: string, ts: string): number {
    this.messages.push({ channel, ts });
    this.numbers.set(`${channel}:${ts}`, this.messages.length);
    return this.messages.length;
  }

  /** `#docs`, or, in a DM, who the author is there with: `DM with @docs-agent` for you. */
  private placeName(channel: string, author: string): string {
    const channelName = this.names.channels[channel];
    if (channelName) return `#${channelName}`;
    const person = this.names.dms[channel];
    if (person === undefined) return channel;
    const other = author === this.names.users[person] ? this.bot : `@${this.names.users[person] ?? person}`;
    return `DM with ${other}`;
  }

  private edited(channel: string, ts: string, args: Record<string, unknown>): void {
    const key = `${channel}:${ts}`;
    const before = this.drawn.get(key) ?? [];
    const lines = messageLines(args, this.markup);
    this.drawn.set(key, lines);
    const changed = lines.filter((line) => !before.includes(line));
    if (changed.length === 0) return; // redrawn as it was: nothing to see
    const threadTs = this.botReplies.get(key);
    const name = threadTs ? `↳ ${this.threadName(channel, threadTs)}` : this.numberName(channel, ts);
    const header = `✎ ${this.terminal.style.bold(name)} edited by ${this.bot}:`;
    this.say([header, ...changed.map((line) => `  ${line}`)].join('\n'));
  }

  private onlyYou(content: SlackMessageContent, threadTs: string | undefined, channel: string | undefined) {
    const lines = messageLines(content, this.markup);
    const mark = `${this.terminal.style.dim('(only you)')} ${this.bot}: `;
    if (threadTs && channel) {
      this.say(indented(`  ↳ ${this.threadName(channel, threadTs)} ${mark}`, lines, '      '));
    } else {
      this.say(indented(mark, lines, '    '));
    }
  }

  private reacted(channel: string, ts: string, name: string): void {
    const threadTs = this.yourReplies.get(`${channel}:${ts}`);
    const where = threadTs ? `${this.threadName(channel, threadTs)} ` : '';
    const whose = threadTs ? 'your reply' : 'a message';
    this.say(`  ↳ ${where}${this.bot} reacted ${emoji(`:${name}:`)} to ${whose}`);
  }

  private numberName(channel: string, ts: string): string {
    const n = this.numberOf(channel, ts);
    return n === undefined ? 'a message' : `#${n}`;
  }

  private threadName(channel: string, threadTs: string): string {
    return this.numberName(channel, threadTs);
  }

  /** A link to a numbered message's thread, as `/docs-agent status` gives, reads `#1` here. */
  private threadLinkName(url: string): string | undefined {
    const match = THREAD_LINK.exec(url);
    if (!match) return undefined;
    const n = this.numberOf(match[1] ?? '', `${match[2]}.${match[3]}`);
    return n === undefined ? undefined : `#${n}`;
  }

  private say(text: string): void {
    this.terminal.print(text);
    const plain = stripAnsi(text).toLowerCase();
    this.recent.push(plain);
    if (this.recent.length > RECENT_MAX) this.recent.shift();
    for (const waiter of [...this.waiters]) if (plain.includes(waiter.text)) waiter.resolve(true);
  }
}

function indented(first: string, lines: string[], indent: string): string {
  const [head = '', ...rest] = lines;
  return [`${first}${head}`, ...rest.map((line) => (line === '' ? '' : `${indent}${line}`))].join('\n');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
