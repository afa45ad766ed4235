import { isDirectMessage } from '../slack/conversations.js';
import { escapeSlackText, truncate } from '../slack/escape.js';
import { textLink } from '../slack/links.js';
import { elapsed } from './jobCard.js';
import type { JobRecord } from './jobRecord.js';

/**
 * What the bot says in a job's thread while following it: the end of a round, a job that is
 * gone or slow, or one the bot may not read. Plain words, one message each; the requester is
 * mentioned where they need to act or look, so Slack notifies them.
 */
export type JobNewsKind = 'completed' | 'failed' | 'archived' | 'gone' | 'slow' | 'refused';

const START_AGAIN = 'start a new one with `/docs-agent &lt;instruction&gt;`';
/** In the bot's DM, where a message of its own is how a job starts. */
const START_AGAIN_IN_DM = 'start a new one with a new message to me, outside any job’s thread';

export function jobNewsText(
  kind: JobNewsKind,
  record: JobRecord,
  /** `activeSince`: when this round of work began (the job's start, or the follow-up that reopened it). */
  when: { now: Date; activeSince: Date },
  /** For `refused`: what Mintlify answered the last read, a key it refuses (401) or access it denies (403). */
  refusal: 'unauthorized' | 'forbidden' = 'unauthorized',
): string {
  const requester = `<@${record.requestedBy}>`;
  // A round's end is news for whoever steered it, too.
  const steerers = (record.steeredBy ?? []).filter((user) => user !== record.requestedBy);
  const people = [requester, ...steerers.map((user) => `<@${user}>`)].join(' ');
  // In the bot's DM, under the person's own message, the news is for them and Slack tells them of it:
  // a mention adds nothing. Under the bot's card (a job moved to the DM), the mention is what notifies.
  const underTheirMessage = isDirectMessage(record.channel) && record.threadTs !== record.cardTs;
  const to = (who: string) => (underTheirMessage ? '' : `${who} `);
  const startAgain = isDirectMessage(record.channel) ? START_AGAIN_IN_DM : START_AGAIN;
  const pr = record.prLink ? pullRequestNamed(record.prLink) : undefined;
  const itsPr = pr ? ` Its work so far is in ${pr}.` : '';
  // A later round (after a follow-up) says so: the same words again would read as a repeat.
  const latest = record.round > 0 ? ' with the latest replies' : '';
  switch (kind) {
    case 'completed':
      return pr
        ? `${to(people)}:white_check_mark: The docs agent is done${latest}: ${pr} is ready for review.`
        : `${to(people)}:white_check_mark: The docs agent is done${latest} and changed nothing, so there is no pull request. If you expected a change, reply in this thread to say what to do.`;
    case 'failed':
      // Whether Mintlify takes a failed or archived job up again on a follow-up is not documented.
      return `${to(people)}:x: The docs agent job failed${record.round > 0 ? ' on the latest replies' : ''}. A reply in this thread still goes to the agent, which may take the job up again; or ${startAgain}.`;
    case 'archived':
      return `${to(people)}:file_cabinet: This job was archived in Mintlify, so the agent has stopped working on it.${itsPr} A reply in this thread still goes to the agent; or ${startAgain}.`;
    case 'gone':
      return `${to(requester)}Mintlify no longer knows this job (\`${escapeSlackText(record.jobId)}\`), so I’ve stopped following it. If the work still needs doing, ${startAgain}.`;
    case 'slow':
      return `${to(requester)}:hourglass: This job has been running for ${elapsed(when.activeSince.toISOString(), when.now)}, which is unusually long. I’ll keep checking, less often, and post here when it ends. Reply in this thread to steer it.`;
    case 'refused':
      // A 403 is no expired key (that is a 401): the key lacks the read scope, or access is denied.
      return refusal === 'forbidden'
        ? `${to(requester)}:warning: I can’t check on this job: Mintlify refuses the bot’s requests to read it (the API key lacks the read scope, the docs project is not the key’s, or the key is not allowed from this server). Please ask the person who installed this app to check the key’s scopes, its allowlist and the project ID. I’ll keep trying, and post here when the job ends.`
        : `${to(requester)}:warning: I can’t check on this job: Mintlify refuses the bot’s requests (its API key is wrong or has expired). Please ask the person who installed this app to fix the key. I’ll keep trying, and post here when the job ends.`;
  }
}

/** The same news as a message of its own, for when the job's thread is gone. */
export function strayJobNewsText(record: JobRecord, news: string): string {
  const prompt = escapeSlackText(truncate(record.prompt.replace(/\s+/g, ' '), 120));
  return `About the docs agent job “${prompt}” (\`${escapeSlackText(record.jobId)}\`): ${news}`;
}

/**
 * A link Slack cannot misread (the characters that end a `<url|label>` are percent-encoded),
 * labelled by its short name (`owner/repo#42`, a GitLab `group/project!7`) or "pull request": a
 * short label, whatever the URL's length, so a line cut to Slack's limits never cuts it inside its
 * markup.
 */
export function pullRequestLink(url: string): string {
  return linkOrText(url, shortName(url)?.label ?? 'pull request');
}

/**
 * The pull request as a sentence names it: "pull request acme/docs#42", "merge request
 * acme/docs!7", or a link reading "the pull request" where its address has no short name.
 */
export function pullRequestNamed(url: string): string {
  const short = shortName(url);
  const link = linkOrText(url, short?.label ?? 'the pull request');
  return short || !link.startsWith('<') ? `${short?.kind ?? 'pull request'} ${link}` : link;
}

/** `owner/repo#42` on GitHub (or GitHub Enterprise), `group/project!7` on GitLab. */
function shortName(url: string): { kind: string; label: string } | undefined {
  const pull = /^https:\/\/[^/]+\/([\w.-]+\/[\w.-]+)\/pull\/(\d+)(?:[/?#]|$)/.exec(url);
  if (pull) return { kind: 'pull request', label: `${pull[1]}#${pull[2]}` };
  const merge = /^https:\/\/[^/]+\/([\w.-]+(?:\/[\w.-]+)+)\/-\/merge_requests\/(\d+)(?:[/?#]|$)/.exec(url);
  return merge ? { kind: 'merge request', label: `${merge[1]}!${merge[2]}` } : undefined;
}

function linkOrText(url: string, label: string): string {
  // Only http(s) becomes a link: Mintlify's answer is not Slack markup (`!channel` would be a ping).
  return textLink(url, label) ?? `\`${escapeSlackText(truncate(url, 300))}\``;
}
