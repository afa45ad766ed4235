import { type Config, ENVIRONMENT_VARIABLES } from './config.js';

/** Starts of this bot's variable names: another name with one of them is most likely misspelt. */
// JOB_ and PREVIEW alone would take CI's and platforms' own (Jenkins' JOB_NAME, a PREVIEW_URL) for ours.
const OWN_PREFIXES = [
  'SLACK_',
  'MINTLIFY_',
  'DIGEST_',
  'ALLOWED_',
  'POLL_',
  'STORE_',
  'QUEUE_',
  'JOB_RETENTION',
  'JOB_SLOW',
  'PREVIEWS',
];
/** Slack's tooling and other Slack apps' usual names (OAuth apps, the Slack CLI's `slack run`): not ours, not misspelt. */
const OTHERS_SLACK_VARIABLES = new Set([
  'SLACK_CLIENT_ID',
  'SLACK_CLIENT_SECRET',
  'SLACK_STATE_SECRET',
  'SLACK_SCOPES',
  'SLACK_USER_SCOPES',
  'SLACK_REDIRECT_URI',
  'SLACK_APP_ID',
  'SLACK_USER_TOKEN',
  'SLACK_WEBHOOK_URL',
]);

/**
 * What is allowed but likely not meant, told once at start (a warning, never a refusal): variables
 * that look like the bot's but that it does not read (ALLOWED_USERS would leave the bot open to
 * everyone, unsaid), Socket Mode where the platform gives a port, and a digest whose buttons
 * ALLOWED_CHANNEL_IDS would refuse. Names only, never a value.
 */
export function configurationWarnings(
  env: Record<string, string | undefined>,
  config: Config,
  { receivesRequests = true }: { receivesRequests?: boolean } = {},
): string[] {
  const known = new Set(ENVIRONMENT_VARIABLES);
  const warnings = Object.keys(env)
    .filter(
      (name) =>
        (OWN_PREFIXES.some((prefix) => name.startsWith(prefix)) || name === 'PREVIEW') &&
        !known.has(name) &&
        !OTHERS_SLACK_VARIABLES.has(name) &&
        !name.startsWith('SLACK_CLI_') &&
        (env[name] ?? '').trim() !== '',
    )
    .sort()
    .map((name) => {
      const meant = closestVariable(name, [...known]);
      return `${name} is set, but docs-agent reads no such variable, so it is ignored${meant ? `: did you mean ${meant}?` : ' (README.md lists every variable)'}`;
    });
  // A platform that sets PORT (Heroku's web dyno) stops a process that never listens on it; a one-off
  // run (`npm run digest` on a one-off dyno, which has PORT too) listens for nothing anyway.
  const listens = receivesRequests && config.services.web;
  if (config.slack.socketMode && listens && (env.PORT ?? '').trim() !== '') {
    warnings.push(
      "SLACK_APP_TOKEN is set, so the bot runs in Socket Mode and listens on no port, yet PORT is set: a platform that gives a web process a port (Heroku's web dyno) stops one that does not listen on it. Unset SLACK_APP_TOKEN (and turn Socket Mode off in the app) to run over HTTP there",
    );
  }
  const { channel } = config.digest;
  const channels = config.access.channelIds;
  if (channel && channels && !channels.has(channel) && config.digest.struggles > 0) {
    warnings.push(
      'DIGEST_CHANNEL is not in ALLOWED_CHANNEL_IDS: the digest is posted, but its "Fix with the docs agent" buttons answer that the bot is not enabled in that channel; add the channel to ALLOWED_CHANNEL_IDS (or set DIGEST_STRUGGLES=0 to leave the buttons out)',
    );
  }
  return warnings;
}

/**
 * The known name a misspelt one most likely meant: one a few edits away (ALLOWED_USERS,
 * DIGEST_CHANNEL_ID), or one it starts (POLL_INTERVAL for POLL_INTERVAL_MS). None when two are as near.
 */
function closestVariable(name: string, known: readonly string[]): string | undefined {
  const scored = known
    .map((candidate) => ({
      candidate,
      distance: candidate.startsWith(`${name}_`) ? 1 : editDistance(name, candidate),
    }))
    .filter(({ distance }) => distance <= Math.min(4, Math.floor(name.length / 3)))
    .sort((a, b) => a.distance - b.distance);
  const [first, second] = scored;
  return first && first.distance !== second?.distance ? first.candidate : undefined;
}

/** Levenshtein's: the fewest letters added, removed or changed to turn one name into the other. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(
        Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + change),
      );
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
