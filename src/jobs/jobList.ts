import type { types } from '@slack/bolt';
import { escapeSlackText, slackDate, truncate } from '../slack/escape.js';
import { messageLink, textLink } from '../slack/links.js';
import { statusLabel } from './jobCard.js';
import { pullRequestLink } from './jobNews.js';
import { asListed, currentPreview, type JobRecord } from './jobRecord.js';

type KnownBlock = types.KnownBlock;

/** The latest round's preview, once deployed. */
function previewUrlOf(record: JobRecord): string | undefined {
  const preview = currentPreview(record);
  return preview?.state === 'success' ? preview.url : undefined;
}

/** Links to a job's thread, pull request and preview, those it has. */
export function jobLinks(record: JobRecord): string[] {
  return [
    record.threadTs ? `<${messageLink(record.channel, record.threadTs)}|thread>` : undefined,
    record.prLink ? pullRequestLink(record.prLink) : undefined,
    textLink(previewUrlOf(record), 'preview'),
  ].filter((link): link is string => link !== undefined);
}

/**
 * One line per job: status, instruction, when, who asked (in a list of several people's), and links
 * to its thread and pull request.
 */
function jobLine(recorded: JobRecord, showRequester: boolean): string {
  const record = asListed(recorded);
  const links = jobLinks(record);
  const prompt = escapeSlackText(truncate(record.prompt.replace(/\s+/g, ' '), 120));
  const by = showRequester ? ` by <@${record.requestedBy}>` : '';
  return `${statusLabel(record)}  “${prompt}”\n      ${slackDate(new Date(record.createdAt), '{ago}')}${by}${links.length ? `  ·  ${links.join('  ·  ')}` : ''}`;
}

/** The answer to `/docs-agent status` (or `status` said to the bot): this channel's recent jobs, for the person alone. */
export function channelJobList(records: JobRecord[]): { text: string; blocks: KnownBlock[] } {
  return jobList(records, {
    none: 'No docs agent jobs in this channel yet. Start one with `/docs-agent &lt;instruction&gt;`.',
    title: 'Recent docs agent jobs in this channel',
    where: 'in this channel',
    showRequester: true,
  });
}

/** The answer to `status` in the bot's DM: the person's own recent jobs, wherever they started them. */
export function personJobList(records: JobRecord[]): { text: string; blocks: KnownBlock[] } {
  return jobList(records, {
    none: 'You have no docs agent jobs yet. Send me what to change in the docs to start one.',
    title: 'Your recent docs agent jobs',
    where: 'of yours',
    // All theirs: "by @you" on every line would say nothing.
    showRequester: false,
  });
}

function jobList(
  records: JobRecord[],
  words: { none: string; title: string; where: string; showRequester: boolean },
): { text: string; blocks: KnownBlock[] } {
  if (records.length === 0) {
    return { text: words.none, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: words.none } }] };
  }
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: `*${words.title}* (${records.length})` },
    },
    ...records.map((record): KnownBlock => ({
      type: 'section',
      // The instruction as written: Slack parses no `@channel` or bare link in it.
      text: { type: 'mrkdwn', text: truncate(jobLine(record, words.showRequester), 3000), verbatim: true },
    })),
  ];
  const jobs = records.length === 1 ? 'job' : 'jobs';
  return { text: `${records.length} recent docs agent ${jobs} ${words.where}`, blocks };
}
