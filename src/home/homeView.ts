import type { types } from '@slack/bolt';
import { statusLabel } from '../jobs/jobCard.js';
import { jobLinks } from '../jobs/jobList.js';
import { HOME_USAGE } from '../jobs/jobAnswers.js';
import { asListed, type JobRecord } from '../jobs/jobRecord.js';
import { escapeSlackText, slackDate, truncate } from '../slack/escape.js';
import { AGENT_USES_PER_HOUR, type AgentBudget } from '../store/rateLedger.js';

type KnownBlock = types.KnownBlock;

/** What a person's Home tab shows; it knows nothing of the store or HTTP. */
export interface HomeFacts {
  /** The person's recent jobs, newest first. */
  jobs: JobRecord[];
  /** Undefined when the ledger could not be read. */
  budget: AgentBudget | undefined;
  digest: { channel: string | undefined; nextAt: Date | undefined };
  now: Date;
}

// Instructions as written: Slack parses no `@channel` or bare link in them (ours are marked up).
const section = (text: string): KnownBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: truncate(text, 3000), verbatim: true },
});

/** The Home tab of someone the bot is not for (ALLOWED_USER_IDS): why, and nothing more. */
export function refusedHomeView(refusal: string): types.HomeView {
  return {
    type: 'home',
    blocks: [{ type: 'header', text: { type: 'plain_text', text: 'Docs agent' } }, section(refusal)],
  };
}

/** The Home tab: the person's recent jobs, the agent budget, the digest and how to use the bot. */
export function homeView(facts: HomeFacts): types.HomeView {
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: 'Docs agent' } },
    section('*Your recent jobs*'),
    ...(facts.jobs.length
      ? facts.jobs.map((record) => section(homeJobLine(record)))
      : [section('No recent jobs of yours. Mention me, DM me or use `/docs-agent` to start one.')]),
    { type: 'divider' },
    section(`*Agent budget*\n${budgetLine(facts.budget, facts.now)}`),
    section(`*Weekly digest*\n${digestLine(facts.digest)}`),
    { type: 'divider' },
    section(HOME_USAGE),
    {
      type: 'context',
      elements: [
        { type: 'mrkdwn', text: `Updated ${slackDate(facts.now, '{date_short_pretty} at {time}')}` },
      ],
    },
  ];
  return { type: 'home', blocks };
}

/** One job: status and instruction, then its age and links to its thread and pull request. */
export function homeJobLine(recorded: JobRecord): string {
  const record = asListed(recorded);
  const prompt = escapeSlackText(truncate(record.prompt.replace(/\s+/g, ' '), 150));
  const details = [`started ${slackDate(new Date(record.createdAt), '{ago}')}`, ...jobLinks(record)];
  return `${statusLabel(record)}  “${prompt}”\n${details.join('  ·  ')}`;
}

function budgetLine(budget: AgentBudget | undefined, now: Date): string {
  if (!budget) return 'I can’t read the agent budget right now.';
  const left = `${budget.remaining} of ${AGENT_USES_PER_HOUR} agent uses (new jobs and follow-ups) left this hour for this project.`;
  if (!budget.nextFreeAt || budget.nextFreeAt <= now) return left;
  const next = slackDate(budget.nextFreeAt, '{time}');
  return budget.remaining === 0
    ? `${left} The next use frees up at ${next}.`
    : `${left} The count goes back up from ${next}, as each use turns an hour old.`;
}

const DIGEST_NOW = '`/docs-agent digest` in a channel I’m in posts there the digest of the last 7 days.';

function digestLine(digest: HomeFacts['digest']): string {
  if (!digest.channel)
    return `No weekly digest is set up (whoever runs the bot can turn it on). ${DIGEST_NOW}`;
  // No next run: DIGEST_CRON=off, and a scheduler outside the bot posts it (npm run digest).
  const when = digest.nextAt
    ? `; the next is due ${slackDate(digest.nextAt)}`
    : ' on a schedule kept outside the bot';
  return `A digest of the most visited docs pages is posted in <#${digest.channel}>${when}. ${DIGEST_NOW}`;
}
