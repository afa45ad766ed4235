import { isMintlifyError } from '../mintlify/index.js';
import { isDirectMessage } from '../slack/conversations.js';
import { escapeSlackText, slackDate, truncate } from '../slack/escape.js';
import type { AgentBudget } from '../store/rateLedger.js';

/**
 * What the person is told, in plain words, when something about their job goes wrong.
 * Never the key, never a stack trace; always what to do next.
 */

const LOW_BUDGET = 10;

const DOORS = [
  '*How to use the docs agent*',
  '• `/docs-agent &lt;instruction&gt;`: start a job, for example `/docs-agent Document the new --dry-run flag`. The agent edits the docs and opens a pull request.',
  '• `@docs-agent &lt;instruction&gt;` in a channel or a thread does the same; in a thread, the agent also reads the thread so far.',
  '• *Send to docs agent* in a message’s ⋮ menu: a job about that message (and its thread, if you like).',
];
const STEERING =
  '• Reply in the job card’s thread to steer the job. Start a reply with `//` to keep it between people; a reply that is only thanks, an OK or a mention of someone stays between people too.';

export const USAGE = [
  ...DOORS,
  '• A direct message to me starts a job too; my Home tab lists your recent jobs.',
  STEERING,
  '• `/docs-agent status`: this channel’s recent jobs.',
  '• `/docs-agent digest`: the most visited docs pages of the last 7 days, posted in this channel.',
  '• `/docs-agent help`: this message.',
].join('\n');

/**
 * `/docs-agent help` typed in a direct message (the bot's, or one between people: the payload does
 * not say which): no channel is "this" one, and `status` there lists the person's own jobs.
 */
export const COMMAND_DM_USAGE = [
  ...DOORS,
  '• A direct message to me starts a job too; my Home tab lists your recent jobs.',
  STEERING,
  '• `/docs-agent status` in a direct message: your recent jobs; in a channel: that channel’s recent jobs.',
  '• `/docs-agent digest` in a channel: the most visited docs pages of the last 7 days, posted there.',
  '• `/docs-agent help`: this message.',
].join('\n');

/** The same, said in the bot's DM (where the DM door is the one in use, and no channel is "this" one). */
export const DM_USAGE = [
  ...DOORS,
  '• Reply in the job card’s thread to steer the job; a reply that is only thanks, an OK or a mention of someone is not sent.',
  '• `/docs-agent status` in a channel: its recent jobs. `/docs-agent digest` in a channel: the most visited docs pages of the last 7 days, posted there.',
  '• My Home tab lists your recent jobs.',
].join('\n');

/** The same, as the Home tab says it (it is no channel, and no answer to `help`). */
export const HOME_USAGE = [
  ...DOORS,
  '• A direct message to me (the *Messages* tab above) starts a job too.',
  STEERING,
  '• `/docs-agent status` in a channel: that channel’s recent jobs. `/docs-agent help`: all of this.',
].join('\n');

function whenAgain(retryAfterMs: number | undefined, budget: AgentBudget | undefined, now: Date): string {
  if (retryAfterMs !== undefined) {
    const at = new Date(now.getTime() + retryAfterMs);
    const minutes = Math.ceil(retryAfterMs / 60_000);
    return `Try again in ${minutes <= 1 ? 'a minute' : `${minutes} minutes`} (${slackDate(at, '{time}')}).`;
  }
  if (budget?.nextFreeAt && budget.nextFreeAt > now) {
    return `Try again after ${slackDate(budget.nextFreeAt, '{time}')}.`;
  }
  return 'Try again within the hour.';
}

/** A line about the hourly agent budget, only when it runs low. */
export function budgetNote(budget: AgentBudget): string | undefined {
  if (budget.remaining > LOW_BUDGET) return undefined;
  if (budget.remaining === 0) return 'That was the last agent use this hour for this project.';
  return `${budget.remaining} agent use${budget.remaining === 1 ? '' : 's'} left this hour for this project.`;
}

/** Refusals about the words sent (bad, too long), which rewording may cure. */
const ABOUT_THE_WORDS = new Set([400, 413, 422]);

function describe(
  error: unknown,
  action: 'start' | 'send',
  budget: AgentBudget | undefined,
  now: Date,
  where: 'channel' | 'dm' = 'channel',
): string {
  const what = action === 'start' ? 'start the job' : 'send your reply to the job';
  if (!isMintlifyError(error)) {
    return `Sorry, I couldn’t ${what}: something went wrong on my side. Please try again in a moment.`;
  }
  switch (error.kind) {
    case 'rate_limited':
      return `Mintlify’s limit of 100 agent uses per hour for this project is reached, so I couldn’t ${what}. ${whenAgain(error.retryAfterMs, budget, now)}`;
    case 'unauthorized':
      return `Mintlify refused the bot’s API key (it is wrong or has expired), so I couldn’t ${what}. Please ask the person who installed this app to create a new admin key.`;
    case 'forbidden':
      return `Mintlify did not allow the bot’s request (the docs project is not the key’s, the key lacks the ${'neededScope' in error ? error.neededScope : 'needed'} scope, or this server’s address is not on the key’s allowlist), so I couldn’t ${what}. Please ask the person who installed this app to check the project ID and the key.`;
    case 'not_found':
      // In the bot's DM, a message to it outside the job's thread is how a job starts.
      return action === 'send'
        ? `Mintlify no longer knows this job, so your reply was not sent. Start a new job with ${where === 'dm' ? 'a new message to me, outside this thread' : '`/docs-agent &lt;instruction&gt;`'}.`
        : 'Mintlify could not find the docs project. Please ask the person who installed this app to check MINTLIFY_PROJECT_ID.';
    case 'invalid_request': {
      const words = error.serviceMessage ? escapeSlackText(error.serviceMessage) : '';
      // A 400, 413 or 422 is about what was asked; another 4xx (409, 405, ...) is not for the person to reword.
      if (ABOUT_THE_WORDS.has(error.status))
        return `Mintlify did not accept that${words ? ` (${words})` : ''}. Please rephrase and try again.`;
      const nothing = action === 'start' ? 'Nothing was started.' : 'The job did not get your reply.';
      return `Mintlify refused the request (${error.status}${words ? `: ${words}` : ''}), so I couldn’t ${what}. ${nothing} If this happens again, please let the person who installed this app know.`;
    }
    case 'redirected':
      return `The address this app has for Mintlify’s API sends requests elsewhere, so I couldn’t ${what}. ${action === 'start' ? 'Nothing was started.' : 'The job did not get your reply.'} Please ask the person who installed this app to check MINTLIFY_API_URL.`;
    case 'service':
    case 'timeout':
    case 'connection':
    case 'schema':
    case 'unexpected_status': {
      const reached = !('mayHaveReachedService' in error) || error.mayHaveReachedService;
      const trouble =
        error.kind === 'timeout'
          ? 'Mintlify did not answer in time'
          : error.kind === 'connection'
            ? 'I couldn’t reach Mintlify'
            : 'Mintlify had a problem';
      if (!reached)
        return `${trouble}, so I couldn’t ${what}. Nothing was sent. Please try again in a few minutes.`;
      return action === 'start'
        ? `${trouble} while starting the job. It may have started anyway: if so, its pull request will still appear in the docs repository. Please check there before trying again.`
        : `${trouble} while sending your reply. The job may have received it anyway; watch this thread before sending it again.`;
    }
  }
}

/** Mintlify created a job but its answer names none (the spec requires no field): it runs unfollowed. */
export const STARTED_WITHOUT_ID_TEXT =
  'Mintlify started the job but did not say which one it is, so I can’t follow it here or post its card. If it changes the docs, its pull request will appear in the docs repository: please check there before asking again.';

/** For the log: which setting a refusal of Mintlify's points at ('' when none). */
export function operatorHint(error: unknown): string {
  if (!isMintlifyError(error)) return '';
  switch (error.kind) {
    case 'unauthorized':
      return ' (check MINTLIFY_API_KEY: an admin key, mint_…, not expired)';
    case 'forbidden':
      return " (check that MINTLIFY_PROJECT_ID is a project of the key's organization, then MINTLIFY_API_KEY's scopes, read and write, and its IP allowlist)";
    case 'not_found':
      return ' (check MINTLIFY_PROJECT_ID: the project ID of the key’s organization)';
    case 'redirected':
      return ` (check MINTLIFY_API_URL: Mintlify's API does not redirect, so it is not the API's address; unset it for https://api.mintlify.com)`;
    case 'connection':
    case 'timeout':
      if (error.kind === 'connection' && error.code === 'UND_ERR_INVALID_ARG') {
        // undici's words name the header, never its value.
        const why = error.cause instanceof Error ? `: ${error.cause.message}` : '';
        return ` (this machine would not make the request${why}; check MINTLIFY_API_KEY for a character pasted with it, such as an invisible space)`;
      }
      // Never reached Mintlify: more likely this machine's network than the service.
      return error.mayHaveReachedService
        ? ''
        : " (check that this machine can reach Mintlify's API over HTTPS: its firewall, proxy or DNS; and MINTLIFY_API_URL, which only a test setup needs)";
    default:
      return '';
  }
}

export const startFailureText = (error: unknown, budget: AgentBudget | undefined, now: Date) =>
  describe(error, 'start', budget, now);

/** `where`: the reply's conversation, a channel or the bot's DM (where no slash command starts a job). */
export const followUpFailureText = (
  error: unknown,
  budget: AgentBudget | undefined,
  now: Date,
  where: 'channel' | 'dm' = 'channel',
) => describe(error, 'send', budget, now, where);

/** A job whose card the channel refused (and the person's DM too, for the doors that try it): it is followed all the same. */
export function notInChannelText(jobId: string): string {
  return [
    `The job started (id \`${escapeSlackText(jobId)}\`), but I can’t post its card in this channel because I’m not a member.`,
    'I’m still following the job: my Home tab and `/docs-agent status` show how it goes, and its pull request will appear in the docs repository. Invite me with `/invite @docs-agent` to get the cards of your next jobs here.',
  ].join(' ');
}

/**
 * Why a job's card could not go where it was asked for, as each answer about it says (the note in
 * the DM, the slash command's reply): so that they never say different things.
 */
export function cardRefusalOf(
  channel: string,
  notAllowed: boolean,
): 'people_dm' | 'not_allowed' | 'not_member' {
  if (isDirectMessage(channel)) return 'people_dm';
  return notAllowed ? 'not_allowed' : 'not_member';
}

/**
 * The slash command's answer when its job moved to the person's DM (followInDm.ts), said as the note
 * beside the card there says it (followedHereText). `notAllowed`: Slack does not let the bot post in
 * the channel, member or not (an announcement-only channel).
 */
export function cardInDmText(channel: string, notAllowed = false): string {
  const why = {
    // An app cannot be invited to a DM between people: nothing to invite it to.
    people_dm: 'I can’t post its card in a direct message between other people (no app can be added to one)',
    not_allowed:
      'Slack doesn’t let me post its card in this channel (posting in it is restricted, it is archived, or this app is not allowed in its workspace)',
    not_member:
      'I can’t post its card in this conversation (I’m probably not a member: `/invite @docs-agent` in a channel)',
  }[cardRefusalOf(channel, notAllowed)];
  return `Job started. ${why}, so it is in our DM: reply in its thread there to steer the job.`;
}

export function cannotPostText(jobId: string): string {
  return `The job started (id \`${escapeSlackText(jobId)}\`), but Slack would not let me post its card here. I’m still following it; its pull request will appear in the docs repository.`;
}

/** Slack was busy or out of reach when the card was posted: the follower posts it shortly. */
export function cardLaterText(jobId: string): string {
  return `The job started (id \`${escapeSlackText(jobId)}\`), but Slack did not take its card just now. I’m following the job, and its card will appear as soon as Slack lets me post it.`;
}

/** The bot was restarted between "Starting…" and the job's record: the job may or may not exist. */
export function interruptedStartText(prompt: string): string {
  const what = escapeSlackText(truncate(prompt.replace(/\s+/g, ' '), 200));
  return `I was interrupted (a restart, or my storage out of reach) while starting your docs agent job (“${what}”), so I can’t follow it. It may have started anyway: if so, its pull request will appear in the docs repository. Please check there before asking again.`;
}

/** A follow-up whose sending was cut short by a restart: it may or may not have reached the job. */
export const INTERRUPTED_FOLLOW_UP =
  'I was interrupted (a restart, or my storage out of reach) while sending your reply to the docs agent, so I can’t tell whether the job got it. Please check the job’s pull request before sending it again.';

/** A start while Slack refuses the bot's token: nothing was made at Mintlify. */
export const SLACK_TOKEN_REFUSED_TEXT =
  'I can’t start a docs agent job right now: Slack refuses my token (the app may have been installed again), so I could not post its card. Nothing was started. Please ask the person who installed this app to update its token.';

/** A DM to the bot of files alone: nothing started. */
export const DM_FILES_ONLY_TEXT =
  'The docs agent can’t open files shared in Slack, so I started nothing. Tell me in words what to change in the docs.';

/** A reply in a job's thread with files and no words. */
export const FILES_ONLY_TEXT =
  'The docs agent can’t open files shared in Slack, so I didn’t pass this on. Reply with what to change in words, or start a reply with `//` to keep it between people.';

/** An edit of a reply the docs agent already has: edits do not reach it. */
export const EDIT_NOT_SENT_TEXT =
  'The docs agent already has your reply as you first wrote it, and edits don’t reach it. To change what you asked, reply again with the change.';

/**
 * An edit made while its reply was being sent, a send cut short (a restart) or whose answer never
 * came (its author told so): the job may have the reply as first written, so the edit is not sent.
 */
export const EDIT_AFTER_UNSURE_SEND_TEXT =
  'I didn’t send your edit: you edited the reply while I was sending it, and I can’t tell whether the docs agent got it as you first wrote it (I’ve said why). Please check the job’s pull request, then reply again with the change if it is still needed.';

/**
 * An edit made while its reply was being sent, which Mintlify then refused (its author told why):
 * the edit is not sent in its place, as a refused reply is not sent again.
 */
export const EDIT_LOST_TEXT =
  'The docs agent has neither your reply nor your edit of it: you edited the reply while I was sending it, and Mintlify refused it (I’ve said why), so I didn’t send the edit either. To ask for the change, reply again.';

/** The same, in a job's thread in the bot's DM: nobody else reads it, so nothing to keep between people. */
export const DM_FILES_ONLY_REPLY_TEXT =
  'The docs agent can’t open files shared in Slack, so I didn’t pass this on. Reply with what to change in words.';

/**
 * A reply under the card of a job forgotten after JOB_RETENTION_DAYS. In the bot's DM nobody
 * mentions the bot: a message to it outside the thread is what starts a job there.
 */
export function tooOldToSteerText(retentionMs: number, where: 'channel' | 'dm' = 'channel'): string {
  const days = Math.round(retentionMs / (24 * 3_600_000));
  const again =
    where === 'dm'
      ? 'send me a message outside this thread saying what to change.'
      : '`/docs-agent &lt;instruction&gt;`, or mention me in this thread (the thread so far becomes its context).';
  return `This job is more than ${days} day${days === 1 ? '' : 's'} old, so I no longer keep it and can’t pass replies on to it. To change the docs again, start a new job: ${again}`;
}
