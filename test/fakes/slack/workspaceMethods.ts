/** The Web API methods about who is who and what is shown outside messages: auth, users, views, DMs. */

import {
  type Answer,
  fail,
  type Json,
  missingArgument,
  type SlackMethod,
  stringArg,
  withProblems,
} from './answers.js';
import { blockProblems, isObject, modalAndHomeBlockLimit, textProblems } from './blockKitLimits.js';
import type { Workspace } from './workspace.js';

const authTest: SlackMethod = {
  answer(_args, ws) {
    const { teamDomain, teamName, teamId, botUserId, botId } = ws.identity;
    return {
      ok: true,
      url: `https://${teamDomain}.slack.com/`,
      team: teamName,
      user: 'docs-agent',
      team_id: teamId,
      user_id: botUserId,
      bot_id: botId,
      is_enterprise_install: false,
    };
  },
};

/** `bots.info`: the bot's own record (its app among it); another bot id is not found. */
const botsInfo: SlackMethod = {
  scopes: () => ['users:read'],
  answer(args, ws) {
    const { botId, botUserId, appId } = ws.identity;
    if (stringArg(args, 'bot') !== botId) return fail('bot_not_found');
    return {
      ok: true,
      bot: {
        id: botId,
        deleted: false,
        name: 'docs-agent',
        updated: 1_700_000_000,
        app_id: appId,
        user_id: botUserId,
        icons: {},
      },
    };
  },
};

const usersInfo: SlackMethod = {
  scopes: () => ['users:read'],
  answer(args, ws) {
    const user = ws.user(stringArg(args, 'user') ?? '');
    return user ? { ok: true, user: structuredClone(user) } : fail('user_not_found');
  },
};

const conversationsOpen: SlackMethod = {
  scopes: () => ['im:write'],
  answer(args, ws) {
    const users = stringArg(args, 'users');
    if (!users) return missingArgument('users');
    const { id, alreadyOpen } = ws.openDm(users.split(',').sort().join(','));
    return { ok: true, no_op: alreadyOpen, already_open: alreadyOpen, channel: { id } };
  },
};

const viewsOpen: SlackMethod = {
  answer(args, ws) {
    if (!stringArg(args, 'trigger_id')) return missingArgument('trigger_id');
    return viewAnswer(args.view, 'modal', ws);
  },
};

const viewsPublish: SlackMethod = {
  answer(args, ws) {
    const user = stringArg(args, 'user_id');
    if (!user) return missingArgument('user_id');
    // "A string that represents view state to protect against possible race conditions": a publish
    // given the hash of a Home tab that was published over since is refused.
    const hash = stringArg(args, 'hash');
    if (hash !== undefined && hash !== ws.homeHashes.get(user)) return fail('hash_conflict');
    const answer = viewAnswer(args.view, 'home', ws);
    const published = (answer as { view?: { hash?: string } }).view?.hash;
    if (published) ws.homeHashes.set(user, published);
    return answer;
  },
};

function viewAnswer(view: unknown, type: 'modal' | 'home', ws: Workspace): Answer {
  if (view === undefined) return missingArgument('view');
  // Slack reports a view over its limits as invalid_arguments, with the same pointer-style messages.
  const problems = viewProblems(view, type);
  if (problems.length > 0 || !isObject(view)) return withProblems('invalid_arguments', problems);
  const id = ws.nextViewId();
  const { teamId, appId, botId } = ws.identity;
  return {
    ok: true,
    view: {
      id,
      team_id: teamId,
      ...view,
      state: { values: {} },
      hash: `${Date.now()}.${id}`,
      app_id: appId,
      bot_id: botId,
      root_view_id: id,
      previous_view_id: null,
    },
  };
}

function viewProblems(view: unknown, type: 'modal' | 'home'): string[] {
  if (!isObject(view)) return ['must provide an object [json-pointer:/view]'];
  if (view.type !== type) return [`must be ${type} [json-pointer:/view/type]`];
  const problems = blockProblems(view.blocks, '/view/blocks', modalAndHomeBlockLimit);
  if (type === 'modal') {
    problems.push(...textProblems(view.title, 24, '/view/title', { plainOnly: true }));
    for (const key of ['submit', 'close'] as const) {
      if (view[key] !== undefined)
        problems.push(...textProblems(view[key], 24, `/view/${key}`, { plainOnly: true }));
    }
  }
  problems.push(...tooLong(view, 'private_metadata', 3000), ...tooLong(view, 'callback_id', 255));
  return problems;
}

function tooLong(view: Json, key: string, max: number): string[] {
  const value = view[key];
  return typeof value === 'string' && value.length > max
    ? [`must be less than ${max + 1} characters [json-pointer:/view/${key}]`]
    : [];
}

export const workspaceMethods: Record<string, SlackMethod> = {
  'auth.test': authTest,
  'bots.info': botsInfo,
  'users.info': usersInfo,
  'conversations.open': conversationsOpen,
  'views.open': viewsOpen,
  'views.publish': viewsPublish,
};
