import { escapeSlackText, quote, truncate } from '../slack/escape.js';
import { cardRefusalOf, DM_USAGE } from './jobAnswers.js';

/** What the doors say, in plain words, when a start goes wrong or a mention or a DM needs help. */

export const SOMETHING_WRONG = 'Sorry, something went wrong on my side. Please try again shortly.';

/** The answer to a mention with no instruction. */
export const MENTION_HELP = [
  'Tell me what to change in the docs, for example `@docs-agent Document the new --dry-run flag`: in a channel I read only messages that mention me, so a reply here needs `@docs-agent` too.',
  'In a thread, I pass the thread so far to the agent as context. Reply in a job card’s thread to steer that job.',
  '`/docs-agent help` says more.',
].join(' ');

/** The same, asked in a job's thread: there a mention, like any reply, goes to the job. */
export const JOB_THREAD_HELP = [
  'This thread belongs to a docs agent job: a reply here, with `@docs-agent` or without, goes to the job as a follow-up (except a thanks, a greeting or `help`).',
  'Start a reply with `//` to keep it between people. `/docs-agent help` says more.',
].join(' ');

/** The same, in the bot's DM: no mention, and nobody else to keep a reply from. */
export const DM_JOB_THREAD_HELP =
  'This thread belongs to a docs agent job: a reply here goes to the job as a follow-up (except a thanks, a greeting or `help`). Send me a message outside this thread to start another job.';

/** A lone "stop" or "cancel" outside a job's thread (any door): there is no stopping a job from Slack. */
export const NO_STOP_TEXT =
  'I can’t stop a docs agent job from Slack (Mintlify has no way to): if you don’t want a job’s changes, close its pull request. To change what a job does, reply in its card’s thread.';

/** The answer to a lone "stop" or "cancel" in a job's thread: nothing can stop the job from Slack. */
export function cannotStopText(word: string): string {
  return `I can’t stop a docs agent job from Slack (Mintlify has no way to), so I didn’t send “${escapeSlackText(word)}” to the agent: it would reach the agent as an instruction (and set a finished job working again). If you don’t want its changes, close its pull request. To change what it does, reply here with what you want instead.`;
}

/** The answer to `status` or `digest` said to the bot (a mention, its DM) or in a job's thread. */
export function commandWordText(
  word: 'status' | 'digest',
  where: 'new' | 'thread' | 'form',
  /** What was said in a thread ("any update?"), quoted there without its last "?", "." or "!". */
  said: string = word,
): string {
  const what =
    word === 'status'
      ? 'To see a channel’s recent jobs, type `/docs-agent status` in it; my Home tab lists yours.'
      : 'To post the docs digest, type `/docs-agent digest` in the channel it should go to.';
  switch (where) {
    case 'new':
      return `${what} I didn’t start a job for “${word}”.`;
    case 'thread':
      return `${what} I didn’t send “${escapeSlackText(truncate(said.replace(/[.!?]+$/, ''), 100))}” to the agent; this job’s card shows where it stands.`;
    case 'form':
      // A form's error is plain text: no code marks.
      return `This form starts a job. ${what.replaceAll('`', '')} Or tell the agent what to change in the docs.`;
  }
}

/** The answer to `help` (or an empty message) in the bot's DM. */
export const DM_HELP = [
  'Send me what to change in the docs, for example _Document the new --dry-run flag_. I start a job and post its card in the thread under your message; reply in that thread to steer it.',
  '',
  DM_USAGE,
].join('\n');

/**
 * Said in the DM thread of a job whose card could not go where it was asked for. `notAllowed`: Slack
 * does not let the bot post there, member or not (an announcement-only channel), and inviting it
 * would change nothing.
 */
export function followedHereText(channel: string, notAllowed = false): string {
  const why = {
    // An app cannot be invited to a DM between people: there is nothing to do but follow it here.
    people_dm: 'I can’t post in a direct message between other people (no app can be added to one)',
    not_allowed: `Slack doesn’t let me post in <#${channel}> (posting there is restricted, it is archived, or this app is not allowed in its workspace)`,
    not_member: `I couldn’t post this job’s card in <#${channel}> (I’m probably not a member: \`/invite @docs-agent\` there)`,
  }[cardRefusalOf(channel, notAllowed)];
  return `${why}, so I’m following the job here. Reply in this thread to steer it.`;
}

/**
 * A job asked for from the shortcut's form or the slash command could not be started: the
 * person's instruction is kept (Slack keeps neither anywhere they could copy it from).
 */
export function failureWithInstruction(reason: string, instruction: string): string {
  // Whole, up to what a command or the form takes (4,000, 3,000): escaped and quoted, even 5,000
  // characters of `&` or of lines stay within a message's 40,000.
  return `${reason}\n\nYour instruction was:\n${quote(escapeSlackText(truncate(instruction, 5_000)))}`;
}
