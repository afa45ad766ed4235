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
  'REDIS_TLS_',
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

/** Names platforms set themselves, near ours but not misspelt: Heroku Redis's REDIS_TLS_URL, say. */
const PLATFORM_VARIABLES = new Set(['REDIS_TLS_URL', 'REDISCLOUD_URL', 'PATH', 'HOST', 'HOSTNAME']);

/**
 * What is allowed but likely not meant, told once at start (a warning, never a refusal): variables
 * that look like the bot's but that it does not read (ALLOWED_USERS would leave the bot open to
 * everyone, unsaid), Socket Mode where the platform gives a port, allowlist entries with no digit
 * (a name in capitals), and a digest whose buttons ALLOWED_CHANNEL_IDS would refuse. Of a
 * variable, only its name is told, never its value; of an allowlist, the entry (an ID, no secret).
 */
export function configurationWarnings(
  env: Record<string, string | undefined>,
  config: Config,
  { receivesRequests = true }: { receivesRequests?: boolean } = {},
): string[] {
  const known = new Set(ENVIRONMENT_VARIABLES);
  const prefixed = (name: string) =>
    (OWN_PREFIXES.some((prefix) => name.startsWith(prefix)) || name === 'PREVIEW') &&
    !OTHERS_SLACK_VARIABLES.has(name) &&
    !name.startsWith('SLACK_CLI_');
  // Or any other name a slip away from ours: SERVICE, REDIS_URI, LOGLEVEL.
  const looksOurs = (name: string) =>
    !PLATFORM_VARIABLES.has(name) && (prefixed(name) || nearlyOurs(name, known));
  const warnings = Object.keys(env)
    .filter((name) => !known.has(name) && looksOurs(name) && (env[name] ?? '').trim() !== '')
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
  // Slack's IDs have digits (C024BE91L): an entry with none is most likely a name in capitals.
  const lists = [
    ['ALLOWED_USER_IDS', [...(config.access.userIds ?? [])]],
    ['ALLOWED_CHANNEL_IDS', [...(config.access.channelIds ?? [])]],
    ['DIGEST_CHANNEL', config.digest.channel ? [config.digest.channel] : []],
  ] as const;
  for (const [name, entries] of lists) {
    const named = entries.filter((entry) => !/\d/.test(entry));
    if (named.length > 0) {
      warnings.push(
        `${name} has ${named.map((entry) => `"${entry}"`).join(', ')}, with no digit: Slack's IDs have digits (C024BE91L, U012AB3CD), so it is likely a name, which matches nobody. Copy the ID from the channel's details or the member's profile`,
      );
    }
  }
  // Redis Cloud's Heroku add-on names its URL otherwise: the bot would run in memory beside a Redis
  // it never uses.
  if ((env.REDISCLOUD_URL ?? '').trim() !== '' && config.store.redisUrl === undefined) {
    warnings.push(
      'REDISCLOUD_URL is set, but REDIS_URL is not, and docs-agent reads REDIS_URL only: state is kept in memory. Set REDIS_URL to the same URL (on Heroku: heroku config:set REDIS_URL=$(heroku config:get REDISCLOUD_URL))',
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

/** A name a letter from one of ours (two, for a long one): not one of the platforms' own, as PATH is not PORT's. */
function nearlyOurs(name: string, known: ReadonlySet<string>): boolean {
  const slips = name.length >= 8 ? 2 : 1;
  return [...known].some((ours) => editDistance(name, ours) <= slips);
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
