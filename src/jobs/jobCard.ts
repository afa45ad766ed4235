import type { types } from '@slack/bolt';

type KnownBlock = types.KnownBlock;

import { isDirectMessage } from '../slack/conversations.js';
import { isLinkable, linkTarget, textLink } from '../slack/links.js';
import { escapeSlackText, quote, slackDate, truncate } from '../slack/escape.js';
import { currentPreview, FINISHED, type JobPreview, type JobRecord, type JobState } from './jobRecord.js';

/** How a job's state reads on its card: an emoji and a few words. */
export function statusLabel(
  record: Pick<JobRecord, 'status' | 'prLink' | 'goneAt' | 'reportedStatus'>,
): string {
  // Mintlify answered 404: no longer followed, whatever it last said.
  if (record.goneAt) return ':grey_question: Gone from Mintlify';
  // A status newer than this version: shown as Mintlify says it (the job is still followed).
  if (record.reportedStatus)
    return `:grey_question: Mintlify says “${escapeSlackText(record.reportedStatus)}”`;
  const labels: Record<JobState, string> = {
    unknown: ':grey_question: Checking status…',
    active: ':hourglass_flowing_sand: Working on it',
    completed: record.prLink
      ? ':white_check_mark: Pull request ready'
      : ':white_check_mark: Done, no changes needed',
    failed: ':x: Failed',
    archived: ':file_cabinet: Archived',
  };
  return labels[record.status];
}

export function elapsed(fromIso: string, to: Date): string {
  const minutes = Math.max(0, Math.round((to.getTime() - Date.parse(fromIso)) / 60_000));
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
}

function repositoryName(url: string): string {
  return url.replace(/^https?:\/\/(www\.)?github\.com\//, '').replace(/\.git$/, '');
}

/** Where a preview deployment stands, for the card; none once it succeeded with a link (the button says it). */
function previewLine(preview: JobPreview): string | undefined {
  // Mintlify's branch name, cut before it is escaped (a cut never splits an `&amp;`): with the summary,
  // the line stays within a context element's 3,000 characters.
  const branch = `\`${escapeSlackText(truncate(preview.branch, 200))}\``;
  switch (preview.state) {
    case 'asked':
    case 'queued':
    case 'in_progress':
      return `:hourglass_flowing_sand: Deploying a preview of ${branch}…`;
    case 'failure':
      return `:warning: The preview of ${branch} failed: ${escapeSlackText(truncate(preview.summary ?? 'no reason given', 300))}. The pull request is not affected.`;
    case 'success':
      return preview.url
        ? undefined
        : `:white_check_mark: The preview of ${branch} is deployed; Mintlify gave no link to it (see your Mintlify dashboard).`;
    case 'untracked': {
      const link = textLink(preview.url, 'open the preview');
      return link
        ? `:hourglass_flowing_sand: Mintlify is deploying a preview of ${branch}, without a way for me to tell when it is done: ${link} in a few minutes.`
        : `:hourglass_flowing_sand: Mintlify is deploying a preview of ${branch}, without a way for me to tell when it is done or where (see your Mintlify dashboard).`;
    }
    case 'unanswered':
      return `:grey_question: Mintlify did not answer when asked for a preview of ${branch} (twice): it may be deploying it all the same, which your Mintlify dashboard shows. The pull request is not affected.`;
  }
}

/**
 * What a reply in the card's thread does. Every reply goes to the job (but a thanks or an OK alone), a
 * finished one's too, which sets a completed job working again; a job Mintlify no longer knows takes none.
 */
function replyHint(record: JobRecord): string | undefined {
  if (record.goneAt) return undefined;
  if (record.status === 'completed')
    return 'Replies in this thread go to the agent and set it working again (one that is only a thanks or an OK is not sent).';
  if (FINISHED.has(record.status)) return 'Replies in this thread still go to the agent.';
  return 'Reply in this thread to steer the job.';
}

/**
 * A card not under the message its job is about links it: a digest's fix, a thread another job had,
 * a card the channel would not take (moved to the person's DM).
 */
function aboutNote(record: JobRecord): string {
  const { about } = record;
  if (!about || !isLinkable(about.link) || (about.under && about.channel === record.channel)) return '';
  const link = linkTarget(about.link);
  return about.what === 'digest' ? `, from <${link}|the docs digest>` : `, about <${link}|this message>`;
}

/** A person's id, as a card posted to it lands in the app's DM with them. */
const isPersonId = (channel: string) => /^[UW]/.test(channel);

/** The job card: who asked, what, and where the job stands. Block Kit plus a plain-text fallback. */
export function jobCard(record: JobRecord): { text: string; blocks: KnownBlock[] } {
  // 500 characters, each at most 5 once escaped (`&amp;`): the section's 3,000 never cut an entity in half.
  const prompt = escapeSlackText(truncate(record.prompt, 500));
  // This round's: a job reopened days later did not take days.
  const since = record.roundStartedAt ?? record.createdAt;
  const details = [
    `*${statusLabel(record)}*`,
    record.finishedAt
      ? `took ${elapsed(since, new Date(record.finishedAt))}`
      : // Slack keeps "{ago}" current as time passes; the card is edited only when the job changes.
        `${record.roundStartedAt ? 'reopened' : 'started'} ${slackDate(new Date(since), '{ago}')}`,
    `job \`${escapeSlackText(record.jobId)}\``,
  ];
  if (record.repository) {
    const repo = escapeSlackText(repositoryName(record.repository));
    details.push(record.ref ? `\`${repo}\` on \`${escapeSlackText(record.ref)}\`` : `\`${repo}\``);
  }
  if (record.model) details.push(`model \`${escapeSlackText(record.model)}\``);
  // A pull request link Slack's button could not carry (not http(s), too long): shown as text.
  const prButton = isLinkable(record.prLink);
  if (record.prLink && !prButton)
    details.push(`pull request ${escapeSlackText(truncate(record.prLink, 300))}`);

  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: truncate(
          `*Docs agent job* for <@${record.requestedBy}>${aboutNote(record)}\n${quote(prompt)}`,
          3000,
        ),
        // The person's words as written: Slack parses no `@channel` or bare link in them (ours are marked up).
        verbatim: true,
      },
    },
    // Verbatim: a pull request link shown as text is Mintlify's, as it gave it.
    {
      type: 'context',
      elements: [{ type: 'mrkdwn', text: truncate(details.join('  ·  '), 3000), verbatim: true }],
    },
  ];
  const preview = currentPreview(record);
  const buttons: types.Button[] = [];
  if (record.prLink && prButton) {
    buttons.push({
      type: 'button',
      action_id: 'open_pull_request',
      text: { type: 'plain_text', text: 'Open pull request' },
      url: record.prLink,
      style: 'primary',
    });
  }
  // The preview's URL only once its deployment succeeded: before, it shows nothing (or the old pages).
  if (record.prLink && preview?.state === 'success' && preview.url) {
    buttons.push({
      type: 'button',
      action_id: 'open_preview',
      text: { type: 'plain_text', text: 'Preview' },
      url: preview.url,
    });
  }
  if (buttons.length > 0) blocks.push({ type: 'actions', elements: buttons });
  const previewNote = preview && previewLine(preview);
  // Verbatim: the branch and why a deployment failed are Mintlify's words.
  if (previewNote)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: previewNote, verbatim: true }] });
  const replies = replyHint(record);
  if (replies) {
    // In the bot's DM nobody else is there to talk to, and a message outside the thread is a new job.
    const betweenPeople =
      isDirectMessage(record.channel) || isPersonId(record.channel)
        ? ' A message here outside this thread starts another job.'
        : ' Start a reply with `//` to keep it between people.';
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `${replies}${betweenPeople}` }] });
  }
  const text = `Docs agent job for <@${record.requestedBy}>: ${statusLabel(record).replace(/^:[a-z_]+: /, '')}. ${escapeSlackText(truncate(record.prompt, 200))}`; // cut before escaping: never half an &amp;
  return { text, blocks };
}
