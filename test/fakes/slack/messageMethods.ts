/** The Web API methods that post, change and read messages: chat.*, reactions.add, conversations.replies and .history. */

import {
  type Answer,
  contentProblem,
  fail,
  type Json,
  messageContent,
  missingArgument,
  type SlackMethod,
  stringArg,
} from './answers.js';
import { parseTs, type StoredMessage } from './workspace.js';

const copy = (message: StoredMessage): StoredMessage => structuredClone(message);

const postMessage: SlackMethod = {
  scopes: () => ['chat:write'],
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    if (!channel) return fail('channel_not_found');
    const problem = contentProblem(args);
    if (problem) return problem;
    // Posting to a user id lands in the DM with that user, as it does in Slack.
    const target = /^[UW]/.test(channel) ? ws.openDm(channel).id : channel;
    if (!ws.isMember(target)) return fail('not_in_channel');
    const threadTs = stringArg(args, 'thread_ts');
    const refused = threadTs && ws.replyRefusal(target, threadTs);
    if (refused) return fail(refused);
    const message = ws.postAsBot(target, {
      ...messageContent(args),
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
    return { ok: true, channel: target, ts: message.ts, message: copy(message) };
  },
};

const update: SlackMethod = {
  scopes: () => ['chat:write'],
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    const ts = stringArg(args, 'ts');
    if (!channel) return fail('channel_not_found');
    const message = ts ? ws.find(channel, ts) : undefined;
    if (!message) return fail('message_not_found');
    if (message.bot_id !== ws.identity.botId) return fail('cant_update_message');
    const problem = contentProblem(args);
    if (problem) return problem;
    Object.assign(message, messageContent(args), {
      edited: { user: ws.identity.botUserId, ts: ws.nextTs() },
    });
    return { ok: true, channel, ts: message.ts, text: message.text, message: copy(message) };
  },
};

const postEphemeral: SlackMethod = {
  scopes: () => ['chat:write'],
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    if (!channel) return fail('channel_not_found');
    if (!ws.isMember(channel)) return fail('not_in_channel');
    const user = stringArg(args, 'user');
    if (!user) return missingArgument('user');
    const problem = contentProblem(args);
    if (problem) return problem;
    // Slack: "Ephemeral messages in threads are only shown if there is already an active thread."
    // It still answers ok, so the fake keeps a note for the tests' teardown to report.
    const threadTs = stringArg(args, 'thread_ts');
    if (threadTs && !ws.hasReplies(channel, threadTs)) {
      ws.unseen.push(
        `chat.postEphemeral to ${user} in ${channel} under ${threadTs}, which has no thread: "${String(args.text)}"`,
      );
    }
    return { ok: true, message_ts: ws.nextTs() };
  },
};

const getPermalink: SlackMethod = {
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    const ts = stringArg(args, 'message_ts');
    if (!channel) return fail('channel_not_found');
    const message = ts ? ws.find(channel, ts) : undefined;
    if (!message) return fail('message_not_found');
    const base = `https://${ws.identity.teamDomain}.slack.com/archives/${channel}/p${message.ts.replace('.', '')}`;
    const inThread = message.thread_ts && message.thread_ts !== message.ts;
    const permalink = inThread ? `${base}?thread_ts=${message.thread_ts}&cid=${channel}` : base;
    return { ok: true, channel, permalink };
  },
};

/** The message and reaction a reactions.* call names, or the error Slack answers for what it lacks. */
function reactionTarget(
  args: Parameters<SlackMethod['answer']>[0],
  ws: Parameters<SlackMethod['answer']>[1],
): { message: StoredMessage; name: string; bot: string } | string {
  const channel = stringArg(args, 'channel');
  const ts = stringArg(args, 'timestamp');
  const name = stringArg(args, 'name');
  if (!channel || !ts) return 'no_item_specified';
  if (!ws.isMember(channel)) return 'not_in_channel';
  // Slack wants the bare name: "white_check_mark", not ":white_check_mark:".
  if (!name || /[:\s]/.test(name)) return 'invalid_name';
  const message = ws.find(channel, ts);
  if (!message) return 'message_not_found';
  return { message, name, bot: ws.identity.botUserId };
}

const addReaction: SlackMethod = {
  scopes: () => ['reactions:write'],
  answer(args, ws) {
    const target = reactionTarget(args, ws);
    if (typeof target === 'string') return fail(target);
    const { message, name, bot } = target;
    const reactions = message.reactions ?? [];
    message.reactions = reactions;
    const existing = reactions.find((reaction) => reaction.name === name);
    if (existing?.users.includes(bot)) return fail('already_reacted');
    if (existing) {
      existing.users.push(bot);
      existing.count += 1;
    } else {
      reactions.push({ name, users: [bot], count: 1 });
    }
    return { ok: true };
  },
};

const removeReaction: SlackMethod = {
  scopes: () => ['reactions:write'],
  answer(args, ws) {
    const target = reactionTarget(args, ws);
    if (typeof target === 'string') return fail(target);
    const { message, name, bot } = target;
    const existing = message.reactions?.find((reaction) => reaction.name === name);
    if (!existing?.users.includes(bot)) return fail('no_reaction');
    existing.users = existing.users.filter((user) => user !== bot);
    existing.count -= 1;
    if (existing.count === 0)
      message.reactions = message.reactions?.filter((reaction) => reaction !== existing);
    return { ok: true };
  },
};

const replies: SlackMethod = {
  // Slack asks for the history scope of the channel's kind; ids alone cannot tell public from private.
  scopes: (args) =>
    String(args.channel ?? '').startsWith('D') ? ['im:history'] : ['channels:history', 'groups:history'],
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    const ts = stringArg(args, 'ts');
    if (!channel) return fail('channel_not_found');
    if (!ts) return missingArgument('ts');
    if (!ws.isMember(channel)) return fail('not_in_channel');
    const thread = ws.thread(channel, ts);
    if (!thread) return fail('thread_not_found');
    const answer = page(inWindow(thread, args), args);
    const [parent] = thread;
    if (ws.threadParentOnEveryPage && stringArg(args, 'cursor') && parent && answer.ok === true) {
      return { ...answer, messages: [copy(parent), ...(answer.messages as StoredMessage[])] };
    }
    return answer;
  },
};

const history: SlackMethod = {
  scopes: (args) =>
    String(args.channel ?? '').startsWith('D') ? ['im:history'] : ['channels:history', 'groups:history'],
  answer(args, ws) {
    const channel = stringArg(args, 'channel');
    if (!channel) return fail('channel_not_found');
    if (!ws.isMember(channel)) return fail('not_in_channel');
    // The channel's own timeline, newest first: thread replies stay in their threads.
    const timeline = ws
      .history(channel)
      .filter((message) => !message.thread_ts || message.thread_ts === message.ts)
      .reverse();
    return page(inTimeWindow(timeline, args), args);
  },
};

/** `oldest`/`latest` bound a history read, as in `conversations.replies` but with no parent kept. */
function inTimeWindow(messages: StoredMessage[], args: Json): StoredMessage[] {
  const inclusive = isTrue(args.inclusive);
  const oldest = stringArg(args, 'oldest');
  const latest = stringArg(args, 'latest');
  return messages.filter((message) => {
    const at = parseTs(message.ts);
    if (oldest && (inclusive ? at < parseTs(oldest) : at <= parseTs(oldest))) return false;
    if (latest && (inclusive ? at > parseTs(latest) : at >= parseTs(latest))) return false;
    return true;
  });
}

const isTrue = (value: unknown) => value === true || value === 'true' || value === '1';

/** `oldest`/`latest` narrow the replies; the parent message always comes back first, as in Slack. */
function inWindow(thread: StoredMessage[], args: Json): StoredMessage[] {
  const inclusive = args.inclusive === true || args.inclusive === 'true' || args.inclusive === '1';
  const oldest = stringArg(args, 'oldest');
  const latest = stringArg(args, 'latest');
  const [parent, ...rest] = thread;
  const kept = rest.filter((message) => {
    const at = parseTs(message.ts);
    if (oldest && (inclusive ? at < parseTs(oldest) : at <= parseTs(oldest))) return false;
    if (latest && (inclusive ? at > parseTs(latest) : at >= parseTs(latest))) return false;
    return true;
  });
  return parent ? [parent, ...kept] : kept;
}

/** Message metadata comes back only when asked for with `include_all_metadata`. */
function page(messages: StoredMessage[], args: Json): Answer {
  const limit = Math.max(1, Number(args.limit ?? 1000) || 1000);
  const cursor = stringArg(args, 'cursor');
  const start = cursor ? Number(Buffer.from(cursor, 'base64').toString('utf8').replace('offset:', '')) : 0;
  const end = start + limit;
  const hasMore = end < messages.length;
  const withMetadata = isTrue(args.include_all_metadata);
  return {
    ok: true,
    messages: messages
      .slice(start, end)
      .map(copy)
      .map(({ metadata, ...message }) => (withMetadata && metadata ? { ...message, metadata } : message)),
    has_more: hasMore,
    response_metadata: { next_cursor: hasMore ? Buffer.from(`offset:${end}`).toString('base64') : '' },
  };
}

export const messageMethods: Record<string, SlackMethod> = {
  'chat.postMessage': postMessage,
  'chat.update': update,
  'chat.postEphemeral': postEphemeral,
  'chat.getPermalink': getPermalink,
  'reactions.add': addReaction,
  'reactions.remove': removeReaction,
  'conversations.replies': replies,
  'conversations.history': history,
};
