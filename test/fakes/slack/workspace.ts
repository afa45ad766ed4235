/** What the fake Slack workspace remembers: channel histories, threads, reactions, users and DMs. */

export interface WorkspaceIdentity {
  teamId: string;
  teamName: string;
  teamDomain: string;
  appId: string;
  botUserId: string;
  botId: string;
}

export interface StoredMessage {
  type: 'message';
  ts: string;
  user?: string;
  bot_id?: string;
  app_id?: string;
  team?: string;
  text: string;
  blocks?: unknown[];
  thread_ts?: string;
  parent_user_id?: string;
  reply_count?: number;
  reply_users?: string[];
  latest_reply?: string;
  reactions?: Array<{ name: string; users: string[]; count: number }>;
  edited?: { user: string; ts: string };
  [key: string]: unknown;
}

export interface SeededMessage {
  ts?: string;
  user: string;
  text: string;
  thread_ts?: string;
  blocks?: unknown[];
  /** Legacy attachments, as apps still post them. */
  attachments?: unknown[];
  /** Posted by another app: its bot id, and the metadata it attached. */
  bot_id?: string;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

export interface SlackUser {
  id: string;
  name?: string;
  real_name?: string;
  tz?: string;
  is_bot?: boolean;
  deleted?: boolean;
}

// Slack timestamps are "seconds.micros" strings of the time of posting; the fake counts in micros
// from the clock (or just past the last ts, when that is ahead), so they sort and stay unique.
const firstTsMicros = 1_700_000_000_000_000;

export class Workspace {
  private readonly channels = new Map<string, StoredMessage[]>();
  private readonly users = new Map<string, Record<string, unknown>>();
  private readonly dms = new Map<string, string>();
  private lastTsMicros = firstTsMicros;
  private viewCount = 0;
  /** Each person's Home tab as last published: its hash (views.publish's `hash` must match it). */
  readonly homeHashes = new Map<string, string>();
  /** Channels the bot is not a member of (it is a member of every other, as tests assume). */
  private readonly outside = new Set<string>();
  /** Ephemeral messages Slack accepted but shows to nobody (see postEphemeral). */
  readonly unseen: string[] = [];
  /** Threads an admin locked (`channel:rootTs`): Slack takes no reply in them. */
  private readonly locked = new Set<string>();
  /**
   * Whether `conversations.replies` puts a thread's parent at the top of every page, not only the
   * first. Sources disagree on what Slack does; the bot must read a thread right either way.
   */
  threadParentOnEveryPage = false;

  constructor(readonly identity: WorkspaceIdentity) {
    this.seedUser({ id: identity.botUserId, name: 'docs-agent', real_name: 'Docs Agent', is_bot: true });
  }

  nextTs(): string {
    this.lastTsMicros = Math.max(this.lastTsMicros + 100, Date.now() * 1_000);
    return formatTs(this.lastTsMicros);
  }

  /** The bot leaves (false) or joins (true) a channel; its DMs are always its own. */
  setMember(channel: string, member: boolean): void {
    if (member) this.outside.delete(channel);
    else this.outside.add(channel);
  }

  isMember(channel: string): boolean {
    return !this.outside.has(channel);
  }

  nextViewId(): string {
    this.viewCount += 1;
    return `V${String(this.viewCount).padStart(8, '0')}`;
  }

  history(channel: string): StoredMessage[] {
    let messages = this.channels.get(channel);
    if (!messages) {
      messages = [];
      this.channels.set(channel, messages);
    }
    return messages;
  }

  find(channel: string, ts: string): StoredMessage | undefined {
    return this.channels.get(channel)?.find((message) => message.ts === ts);
  }

  /**
   * Takes a message out, as a person deleting it in Slack does. A thread's parent with replies stays
   * as Slack leaves it: a tombstone ("This message was deleted.", by USLACKBOT, its text, blocks and
   * metadata gone), its replies still there.
   */
  remove(channel: string, ts: string): boolean {
    const history = this.history(channel);
    const at = history.findIndex((message) => message.ts === ts);
    if (at === -1) return false;
    const message = history[at]!;
    if (message.thread_ts === message.ts && (message.reply_count ?? 0) > 0) {
      const { reply_count, reply_users, latest_reply } = message;
      history[at] = {
        type: 'message',
        subtype: 'tombstone',
        text: 'This message was deleted.',
        user: 'USLACKBOT',
        hidden: true,
        ts,
        thread_ts: ts,
        parent_user_id: 'USLACKBOT',
        ...(reply_count === undefined ? {} : { reply_count }),
        ...(reply_users === undefined ? {} : { reply_users }),
        ...(latest_reply === undefined ? {} : { latest_reply }),
      };
      return true;
    }
    history.splice(at, 1);
    return true;
  }

  /** Stores a message, keeping the history in ts order and the parent's reply summary current. */
  store(channel: string, message: StoredMessage): StoredMessage {
    const micros = parseTs(message.ts);
    if (micros > this.lastTsMicros) this.lastTsMicros = micros;
    const history = this.history(channel);
    // In ts order: after the last one with an earlier or equal ts (nearly always at the end).
    let at = history.length;
    while (at > 0 && parseTs(history[at - 1]!.ts) > micros) at -= 1;
    history.splice(at, 0, message);
    if (message.thread_ts && message.thread_ts !== message.ts) this.noteReply(channel, message);
    return message;
  }

  postAsBot(channel: string, fields: Partial<StoredMessage>): StoredMessage {
    const { botUserId, botId, appId, teamId } = this.identity;
    return this.store(channel, {
      ...fields,
      type: 'message',
      ts: this.nextTs(),
      user: botUserId,
      bot_id: botId,
      app_id: appId,
      team: teamId,
      text: fields.text ?? '',
    });
  }

  seedMessage(channel: string, seed: SeededMessage): StoredMessage {
    const { ts = this.nextTs(), ...rest } = seed;
    return this.store(channel, { type: 'message', team: this.identity.teamId, ...rest, ts });
  }

  /** An admin locks (true) or unlocks (false) the thread rooted at `ts`. */
  setLocked(channel: string, ts: string, locked: boolean): void {
    if (locked) this.locked.add(`${channel}:${ts}`);
    else this.locked.delete(`${channel}:${ts}`);
  }

  /**
   * Why Slack would refuse a reply under `threadTs`, if it would: the thread is locked by an admin
   * (`restricted_action_thread_locked`, chat.postMessage's documented "Cannot post replies to a thread
   * that has been locked by admins"), or its parent was deleted and is a tombstone, which holds its
   * place but takes no reply (`cannot_reply_to_message`, as Slack is reported to answer it).
   */
  replyRefusal(channel: string, threadTs: string): string | undefined {
    const parent = this.find(channel, threadTs);
    const root = parent?.thread_ts ?? threadTs;
    if (this.locked.has(`${channel}:${root}`)) return 'restricted_action_thread_locked';
    if (parent?.subtype === 'tombstone') return 'cannot_reply_to_message';
    return undefined;
  }

  /** Whether `ts` names a message that has replies: Slack's "active thread". */
  hasReplies(channel: string, ts: string): boolean {
    const message = this.find(channel, ts);
    return message !== undefined && message.thread_ts === message.ts && (message.reply_count ?? 0) > 0;
  }

  /** The thread a message belongs to: the parent first, then the replies in order. */
  thread(channel: string, ts: string): StoredMessage[] | undefined {
    const message = this.find(channel, ts);
    if (!message) return undefined;
    const rootTs = message.thread_ts ?? message.ts;
    return this.history(channel).filter((m) => m.ts === rootTs || m.thread_ts === rootTs);
  }

  seedUser(user: SlackUser): void {
    const name = user.name ?? user.id.toLowerCase();
    const realName = user.real_name ?? name;
    this.users.set(user.id, {
      id: user.id,
      team_id: this.identity.teamId,
      name,
      real_name: realName,
      deleted: user.deleted ?? false,
      is_bot: user.is_bot ?? false,
      tz: user.tz ?? 'Europe/London',
      profile: { display_name: name, real_name: realName },
    });
  }

  user(id: string): Record<string, unknown> | undefined {
    return this.users.get(id);
  }

  /** The DM channel with a user, stable per user, and whether it was already open. */
  openDm(userId: string): { id: string; alreadyOpen: boolean } {
    const existing = this.dms.get(userId);
    if (existing) return { id: existing, alreadyOpen: true };
    const id = `D${String(this.dms.size + 1).padStart(8, '0')}`;
    this.dms.set(userId, id);
    return { id, alreadyOpen: false };
  }

  private noteReply(channel: string, reply: StoredMessage): void {
    const parent = this.find(channel, reply.thread_ts ?? '');
    if (!parent) return;
    parent.thread_ts = parent.ts;
    parent.reply_count = (parent.reply_count ?? 0) + 1;
    parent.latest_reply = reply.ts;
    const users = new Set([...(parent.reply_users ?? []), ...(reply.user ? [reply.user] : [])]);
    parent.reply_users = [...users];
    if (parent.user) reply.parent_user_id = parent.user;
  }
}

export function formatTs(micros: number): string {
  return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
}

export function parseTs(ts: string): number {
  const [seconds = '0', micros = '0'] = ts.split('.');
  return Number(seconds) * 1_000_000 + Number(micros.padEnd(6, '0').slice(0, 6));
}
