import { readFileSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { z } from 'zod';
import { nextCronRun } from './queue/cron.js';

/**
 * The environment, read once at the edge and validated into one typed object.
 * Nothing deeper in the bot reads `process.env`.
 */

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
/** What a process runs: `web` verifies, acknowledges and enqueues Slack's requests; `worker` does the work. */
const SERVICE_NAMES = ['web', 'worker'] as const;
const MINTLIFY_KEYS_PAGE = 'https://app.mintlify.com/settings/organization/api-keys';

const blankToUndefined = (value: unknown) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;

const optionalText = z.preprocess(blankToUndefined, z.string().trim().optional());

const requiredText = (what: string) =>
  z.preprocess(blankToUndefined, z.string({ error: `is missing: ${what}` }).trim());

const integer = (fallback: number, min: number, max: number) =>
  z.preprocess(
    blankToUndefined,
    z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(min, `must be at least ${min}`)
      .max(max, `must be at most ${max}`)
      .default(fallback),
  );

const httpUrl = z.preprocess(
  blankToUndefined,
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
);

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An API's URL, which carries a token or key: https, or http to this machine only (a local proxy, tests). */
const apiUrl = z.preprocess(
  blankToUndefined,
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL', abort: true })
    .refine((value) => {
      const { protocol, hostname } = new URL(value);
      return (
        protocol === 'https:' || LOOPBACK.has(hostname) || (isIPv4(hostname) && hostname.startsWith('127.'))
      );
    }, 'must be an https URL: it carries a secret, which plain http would send in the clear (http is taken for localhost only)')
    // The bot adds each path's version itself (/v1/…, /v2/…): one written here would be doubled.
    .refine(
      (value) => !/\/v\d+\/?$/.test(new URL(value).pathname),
      'must not end with an API version (/v1, /v2): the bot adds it to each request; write the address alone (https://api.mintlify.com)',
    )
    .transform((value) => value.replace(/\/+$/, ''))
    .optional(),
);

/**
 * Slack's IDs, as Slack writes them: in capitals, never normalised here (as DIGEST_CHANNEL is not),
 * so what the allowlist holds is what its operator wrote. D (a DM) is taken, though DMs are never
 * restricted: it is harmless, and refusing it would stop a bot that runs today.
 */
const SLACK_IDS = {
  user: {
    pattern: /^[UW][A-Z0-9]{2,}$/,
    what: 'a user ID (U… or W…, in capitals)',
    where: 'copy it from the member’s profile > ⋯ (More) > Copy member ID',
  },
  channel: {
    pattern: /^[CGD][A-Z0-9]{2,}$/,
    what: 'a channel ID (C… or G…, in capitals), not its name',
    where: 'copy it from the bottom of the channel’s details (click the channel’s name)',
  },
} as const;

/** ALLOWED_USER_IDS, ALLOWED_CHANNEL_IDS: a name or a mention there matches nobody, and refuses everyone. */
const idList = (kind: keyof typeof SLACK_IDS) =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .optional()
      .transform((value, ctx) => {
        if (value === undefined) return undefined;
        const ids = value.split(/[\s,]+/).filter(Boolean);
        const { pattern, what, where } = SLACK_IDS[kind];
        // Only separators (a template whose values were unset): a list of nobody would refuse everyone, unsaid.
        if (ids.length === 0) {
          ctx.addIssue({
            code: 'custom',
            message: `names nothing (only commas or spaces), which would refuse everyone: each entry must be ${what}; leave it unset to allow all`,
          });
          return z.NEVER;
        }
        const wrong = ids.filter((id) => !pattern.test(id));
        if (wrong.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `lists ${wrong.map((id) => shownEntry(id, pattern)).join(', ')}: each entry must be ${what}; ${where}`,
          });
          return z.NEVER;
        }
        return new Set(ids);
      }),
  );

/** An allowlist's wrong entry, with the ID it may have meant (a mention's, or in capitals). */
function shownEntry(entry: string, pattern: RegExp): string {
  // An ID is short: anything long may be a token pasted in the wrong place, and is not repeated.
  if (entry.length > 30) return `an entry of ${entry.length} characters`;
  const meant = (/^<[@#]([A-Za-z0-9]+)(?:\|[^>]*)?>$/.exec(entry)?.[1] ?? entry).toUpperCase();
  // In capitals only when it looks like an ID: `general` is a name, and GENERAL would match nobody either.
  const likeAnId = pattern.test(meant) && /\d/.test(meant);
  return meant !== entry && likeAnId ? `"${entry}" (write ${meant})` : `"${entry}"`;
}

/**
 * A key, token or secret is printable ASCII alone: a character pasted with it (a zero-width space,
 * a non-breaking one, which trim() keeps) cannot go in an HTTP header, and every request would
 * fail. The character is named by its code point and place, never shown with the value.
 */
function notPrintableAscii(value: string): string | undefined {
  const chars = [...value];
  const index = chars.findIndex((char) => !/^[\x21-\x7e]$/.test(char));
  if (index === -1) return undefined;
  const code = `U+${(chars[index]?.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  const where =
    index === 0
      ? 'at its start'
      : index === chars.length - 1
        ? 'at its end'
        : `after its first ${index} characters`;
  return `has a character no key or token holds (${code}, ${where}), likely a space or an invisible character pasted with it: copy it again and paste it alone`;
}

/** Stops the checks after it: a secret with a stray character gets that one problem told. */
function printableAscii(value: string, ctx: z.RefinementCtx): void {
  const problem = notPrintableAscii(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, continue: false });
}

const mintlifyKey = requiredText(`an admin API key, created at ${MINTLIFY_KEYS_PAGE}`).superRefine(
  (key, ctx) => {
    const stray = notPrintableAscii(key);
    if (stray !== undefined) {
      ctx.addIssue({ code: 'custom', message: stray });
      return;
    }
    const kind = key.startsWith('mint_dsc_')
      ? 'an assistant key (mint_dsc_)'
      : key.startsWith('mint_us_')
        ? 'an index key (mint_us_)'
        : key.startsWith('mint_')
          ? undefined
          : 'not a Mintlify API key';
    if (kind !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `is ${kind}; the agent API needs an admin key (it starts with mint_ and is created at ${MINTLIFY_KEYS_PAGE})`,
      });
    }
  },
);

const envSchema = z.object({
  SLACK_BOT_TOKEN: requiredText('the Bot User OAuth Token (xoxb-...) from "OAuth & Permissions"')
    .superRefine(printableAscii)
    .refine(
      (token) => token.startsWith('xoxb-'),
      'must be a bot token starting with xoxb- ("OAuth & Permissions" > Bot User OAuth Token)',
    ),
  SLACK_SIGNING_SECRET: optionalText.superRefine((secret, ctx) => {
    if (secret !== undefined) printableAscii(secret, ctx);
  }),
  SLACK_APP_TOKEN: optionalText
    .superRefine((token, ctx) => {
      if (token !== undefined) printableAscii(token, ctx);
    })
    .refine(
      (token) => token === undefined || token.startsWith('xapp-'),
      'must be an app-level token starting with xapp- ("Basic Information" > App-Level Tokens)',
    ),
  SLACK_API_URL: apiUrl,
  MINTLIFY_API_KEY: mintlifyKey,
  MINTLIFY_PROJECT_ID: requiredText(`the project ID shown at ${MINTLIFY_KEYS_PAGE}`),
  MINTLIFY_API_URL: apiUrl,
  REDIS_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      // As the other values: a space pasted with the URL (from a dashboard) is not part of it.
      .trim()
      .regex(/^rediss?:\/\//, { error: 'must be a redis:// or rediss:// URL', abort: true })
      // Read as node-redis reads it (WHATWG URL), the host starts after the last @ before the first
      // / ? or #: one of those unencoded in a password makes the rest of it the host, logged as such.
      .refine((value) => !hasAmbiguousCredentials(value), {
        error:
          'has a user name or password that is not percent-encoded, so part of it would be read as the host: percent-encode # / ? @ : in it as %23 %2F %3F %40 %3A (redis://:password@host:6379)',
        abort: true,
      })
      .refine((value) => URL.canParse(value) && new URL(value).hostname !== '', {
        error:
          'is not a URL that names a host (redis://:password@host:6379): percent-encode characters such as # / @ : in the password (# is %23)',
        abort: true,
      })
      // The Redis client decodes them, and a lone % stops it with nothing but "URI malformed".
      .refine(
        (value) =>
          [new URL(value).username, new URL(value).password].every((part) => decoded(part) !== undefined),
        'has a user name or password with a % that is not percent-encoded: write % as %25 (and # / @ : as %23 %2F %40 %3A)',
      )
      // The Redis client reads the path as the database number, and stops at anything else
      // ("Invalid pathname") before it connects: told here, with the other variables' problems.
      .refine(
        (value) => /^(?:\/\d*)?$/.test(new URL(value).pathname),
        'has a path that is not a database number: after host:port, write nothing or /<number> (/0); STORE_NAMESPACE, not the path, keeps apart the keys of bots sharing a Redis',
      )
      .optional(),
  ),
  // Heroku Redis and its peers present certificates nothing vouches for: one of these must say so.
  REDIS_TLS_REJECT_UNAUTHORIZED: z.preprocess(
    (value) => (typeof value === 'string' ? value.trim().toLowerCase() || undefined : value),
    z.enum(['true', 'false'], { error: 'must be true or false' }).default('true'),
  ),
  REDIS_TLS_CA: optionalText,
  STORE_NAMESPACE: optionalText.default('docs-agent'),
  JOB_RETENTION_DAYS: integer(30, 1, 3_650),
  PREVIEWS: z.preprocess(
    (value) => (typeof value === 'string' ? value.trim().toLowerCase() || undefined : value),
    z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
  ),
  SERVICES: z.preprocess(
    blankToUndefined,
    z
      .string()
      .default('web,worker')
      .transform((value) =>
        value
          .split(',')
          .map((role) => role.trim().toLowerCase())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(
            z.enum(SERVICE_NAMES, { error: `lists ${SERVICE_NAMES.join(' and ')} only, comma-separated` }),
          )
          .min(1, `names at least one of ${SERVICE_NAMES.join(', ')}`),
      ),
  ),
  // BullMQ's lock: renewed by a live worker every half of it; a dead one's work is taken over after it.
  QUEUE_LOCK_MS: integer(30_000, 1_000, 600_000),
  PORT: integer(3000, 0, 65_535),
  POLL_INTERVAL_MS: integer(5_000, 100, 3_600_000),
  POLL_MAX_INTERVAL_MS: integer(120_000, 100, 86_400_000),
  POLL_CONCURRENCY: integer(8, 1, 256),
  POLL_REQUESTS_PER_MINUTE: integer(120, 1, 100_000),
  // A job past JOB_SLOW_AFTER_MS is still followed, but every 15 min is plenty for one that slow.
  POLL_SLOW_INTERVAL_MS: integer(900_000, 100, 86_400_000),
  JOB_SLOW_AFTER_MS: integer(24 * 3_600_000, 1_000, 30 * 24 * 3_600_000),
  DIGEST_CHANNEL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(
        /^[CG][A-Z0-9]{2,}$/,
        'must be a channel ID (C…), not its name: copy it from the bottom of the channel’s details',
      )
      .optional(),
  ),
  // `off`: the workers post no digest on a schedule (an external scheduler runs `npm run digest`).
  DIGEST_CRON: optionalText
    .default('0 9 * * 1')
    .transform((value) => (value.toLowerCase() === 'off' ? undefined : cronPattern(value))),
  DIGEST_TIMEZONE: optionalText.default('UTC'),
  DIGEST_TOP: integer(10, 1, 40),
  DIGEST_STRUGGLES: integer(3, 0, 5),
  DIGEST_MAX_PAGES: integer(1_000, 1, 100_000),
  // 75 min: one full window of the hourly analytics limit, and a little more.
  DIGEST_GIVE_UP_MS: integer(4_500_000, 1_000, 24 * 3_600_000),
  DOCS_SITE_URL: httpUrl,
  ALLOWED_USER_IDS: idList('user'),
  ALLOWED_CHANNEL_IDS: idList('channel'),
  LOG_LEVEL: z.preprocess(
    (value) => (typeof value === 'string' ? value.trim().toLowerCase() || undefined : value),
    z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
  ),
});

/**
 * A value wrapped in quotes: Docker's `--env-file`, systemd's `Environment=` with the quotes in the
 * wrong place and some dashboards keep them as part of the value. No setting of the bot has them.
 */
const QUOTED = /^(["']).*\1$/s;
const QUOTED_PROBLEM =
  'is wrapped in quotes, which are read here as part of the value (as Docker’s --env-file keeps them): remove the quotes';

/** The example values of .env.example: copied unchanged, they would fail only at the first request. */
const EXAMPLE_VALUES: Record<string, string> = {
  SLACK_BOT_TOKEN: 'xoxb-your-bot-token',
  SLACK_SIGNING_SECRET: 'your-signing-secret',
  SLACK_APP_TOKEN: 'xapp-your-app-token',
  MINTLIFY_API_KEY: 'mint_your_admin_key',
  MINTLIFY_PROJECT_ID: 'your-project-id',
};

/**
 * Checks that span several variables; they run even when other variables are wrong.
 * `receivesRequests`: this process takes Slack's requests (the web role), and needs a way to verify them.
 */
function crossChecks(
  env: Record<string, string | undefined>,
  receivesRequests: boolean,
): Array<{ variable: string; problem: string }> {
  const problems: Array<{ variable: string; problem: string }> = [];
  const present = (name: string) => (env[name] ?? '').trim() !== '';
  // Only HTTP mode's web role verifies requests with the signing secret: elsewhere the example's is unused.
  const verifiesSignatures = receivesRequests && !present('SLACK_APP_TOKEN');
  for (const [variable, example] of Object.entries(EXAMPLE_VALUES)) {
    if (variable === 'SLACK_SIGNING_SECRET' && !verifiesSignatures) continue;
    if (env[variable]?.trim() === example) {
      problems.push({ variable, problem: "is still .env.example's example value: set your app's own" });
    }
  }
  if (verifiesSignatures && !present('SLACK_SIGNING_SECRET')) {
    problems.push({
      variable: 'SLACK_SIGNING_SECRET',
      problem:
        'is missing: the Signing Secret from "Basic Information" (needed in HTTP mode; set SLACK_APP_TOKEN instead for Socket Mode)',
    });
  }
  // node-redis takes TLS from the URL's scheme alone: with redis:// these would do nothing, unsaid.
  const url = env.REDIS_URL?.trim() ?? '';
  // REDIS_TLS_REJECT_UNAUTHORIZED=true is the default said aloud: it asks for nothing TLS would do.
  const tlsAsked = {
    REDIS_TLS_CA: present('REDIS_TLS_CA'),
    REDIS_TLS_REJECT_UNAUTHORIZED: env.REDIS_TLS_REJECT_UNAUTHORIZED?.trim().toLowerCase() === 'false',
  };
  const tlsUnused = /^redis:\/\//i.test(url)
    ? 'is set, but REDIS_URL is a plain redis:// URL, which uses no TLS: use a rediss:// URL (two s) for TLS, or unset it'
    : url === ''
      ? 'is set, but REDIS_URL is not, so there is no Redis to use it with: set REDIS_URL (a rediss:// URL), or unset it'
      : undefined;
  for (const [variable, asked] of Object.entries(tlsAsked)) {
    if (asked && tlsUnused) problems.push({ variable, problem: tlsUnused });
  }
  const timezone = env.DIGEST_TIMEZONE?.trim() || 'UTC';
  if (!isValidTimeZone(timezone)) {
    problems.push({
      variable: 'DIGEST_TIMEZONE',
      problem: 'is not an IANA time zone (for example UTC, Europe/Paris, America/New_York)',
    });
  }
  const pattern = env.DIGEST_CRON?.trim() || '0 9 * * 1';
  const cronProblem =
    pattern.toLowerCase() === 'off'
      ? undefined
      : cronError(cronPattern(pattern), isValidTimeZone(timezone) ? timezone : 'UTC');
  if (cronProblem) {
    problems.push({
      variable: 'DIGEST_CRON',
      problem: `is not a valid cron expression (${cronProblem}); for example "0 9 * * 1" is Monday 09:00 (off: no schedule)`,
    });
  }
  return problems;
}

/**
 * REDIS_TLS_CA: PEM text (newlines may be written as \\n, as some dashboards keep them), or the
 * path of a PEM file.
 */
function readCertificates(value: string | undefined): { pem: string } | { problem: string } | undefined {
  if (value === undefined) return undefined;
  const text = value.includes('-----BEGIN') ? value.replace(/\\n/g, '\n') : readPemFile(value);
  if (text === undefined) {
    return {
      problem: 'is neither PEM text (-----BEGIN CERTIFICATE-----...) nor the path of a file that can be read',
    };
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    return {
      problem: 'holds no certificate (PEM text with -----BEGIN CERTIFICATE-----, or the path of such a file)',
    };
  }
  return { pem: text };
}

function readPemFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * `?` ("no specific value", as Quartz, AWS and cron-parser read a day field) written as `*`, as croner
 * reads it: the pattern the log shows is the one that runs.
 */
function cronPattern(pattern: string): string {
  return pattern.replaceAll('?', '*');
}

function cronError(pattern: string, timezone: string): string | undefined {
  try {
    if (!nextCronRun(pattern, timezone, new Date())) {
      return 'it never comes round, as a date that does not exist (30 February) never does';
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export type LogLevel = (typeof LOG_LEVELS)[number];

export interface StoreSettings {
  redisUrl: string | undefined;
  namespace: string;
  /** For rediss:// URLs: whether the certificate must be one the system (or `ca`) trusts, and extra CA certificates (PEM). */
  tls: { rejectUnauthorized: boolean; ca: string | undefined };
}

export interface Config {
  slack: {
    botToken: string;
    signingSecret: string | undefined;
    appToken: string | undefined;
    apiUrl: string | undefined;
    socketMode: boolean;
  };
  mintlify: { apiKey: string; projectId: string; apiUrl: string };
  store: StoreSettings;
  /** How long a job's record, its thread lookup and every key about it outlive the job's last activity. */
  jobRetentionMs: number;
  /** Whether a finished job's pull request gets a preview deployment (PREVIEWS). */
  previews: boolean;
  /** The roles this process runs (SERVICES). */
  services: { web: boolean; worker: boolean };
  /** How long a worker's running work stays locked (a dead worker's is taken over after it). */
  queueLockMs: number;
  port: number;
  poll: {
    intervalMs: number;
    maxIntervalMs: number;
    concurrency: number;
    requestsPerMinute: number;
    slowAfterMs: number;
    /** How often a job past `slowAfterMs` is checked. */
    slowIntervalMs: number;
  };
  digest: {
    channel: string | undefined;
    /** Undefined with DIGEST_CRON=off: the workers post no digest on a schedule. */
    cron: string | undefined;
    timezone: string;
    top: number;
    /** Items of each kind in "Where readers struggled"; 0 leaves the section out. */
    struggles: number;
    maxPages: number;
    /** How long a digest may wait out Mintlify's analytics rate limit before it gives up. */
    giveUpMs: number;
    siteUrl: string | undefined;
  };
  access: { userIds: ReadonlySet<string> | undefined; channelIds: ReadonlySet<string> | undefined };
  logLevel: LogLevel;
}

/** Values that must never be printed, in a log line or a Slack message. */
export function secretsOf(config: Config): string[] {
  return [
    config.slack.botToken,
    config.slack.signingSecret,
    config.slack.appToken,
    config.mintlify.apiKey,
    ...redisPassword(config.store.redisUrl),
  ].filter((value): value is string => typeof value === 'string' && value.length > 0);
}

/** REDIS_URL's password as written (percent-encoded) and as sent to Redis (decoded): a log line may hold either. */
function redisPassword(url: string | undefined): string[] {
  if (!url || !URL.canParse(url)) return [];
  const written = new URL(url).password;
  return [...new Set([written, decoded(written)])].filter((value): value is string => Boolean(value));
}

/** A URL's percent-encoded part, decoded; undefined when it cannot be (a % not followed by two hex digits). */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * An @ after the first / ? or # past the scheme's //: the URL parser ends the host at that first
 * character, so what was meant as user name or password is read in part as the host (or path).
 */
function hasAmbiguousCredentials(url: string): boolean {
  const rest = url.slice(url.indexOf('//') + 2);
  const lastAt = rest.lastIndexOf('@');
  return lastAt !== -1 && /[/?#]/.test(rest.slice(0, lastAt));
}

export class ConfigError extends Error {
  constructor(readonly problems: ReadonlyArray<{ variable: string; problem: string }>) {
    super(
      [
        `docs-agent cannot start: ${problems.length} configuration problem${problems.length === 1 ? '' : 's'}`,
        ...problems.map(({ variable, problem }) => `  - ${variable} ${problem}`),
        '',
        'Set these in the environment (or in a .env file in the directory the bot runs in); README.md lists every variable.',
        'To try the bot without Slack or a Mintlify account, run: npm run sandbox',
      ].join('\n'),
    );
    this.name = 'ConfigError';
  }
}

/**
 * Reads the environment into a Config, or throws a ConfigError naming every problem at once.
 * `receivesRequests: false` (the one-shot digest), or SERVICES without `web`: no signing secret or
 * app token is needed.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  options: { receivesRequests?: boolean } = {},
): Config {
  const parsed = envSchema.safeParse(env);
  // A value in quotes is told as that alone: "must start with xoxb-" would puzzle whoever sees it does.
  const quoted = new Set(Object.keys(envSchema.shape).filter((name) => QUOTED.test(env[name]?.trim() ?? '')));
  // Every message is ours and none quotes the value, so a secret cannot leak through them.
  const problems = [
    ...[...quoted].map((variable) => ({ variable, problem: QUOTED_PROBLEM })),
    ...(parsed.success
      ? []
      : parsed.error.issues.map((issue) => ({
          variable: String(issue.path[0] ?? 'environment'),
          problem: issue.message,
        }))),
  ];
  // Variables that tie together, each read on its own: their problems are told with any other's.
  const valid = <K extends keyof typeof envSchema.shape>(
    key: K,
  ): z.output<(typeof envSchema.shape)[K]> | undefined => {
    const read = envSchema.shape[key].safeParse(env[key]);
    return read.success ? (read.data as z.output<(typeof envSchema.shape)[K]>) : undefined;
  };
  const services = valid('SERVICES');
  const roles = services ? new Set(services) : undefined;
  // Only the web role takes Slack's requests: a worker-only process verifies none (it still needs
  // SLACK_BOT_TOKEN). SERVICES that cannot be read is told on its own, and the secret asked for.
  problems.push(...crossChecks(env, (options.receivesRequests ?? true) && (roles?.has('web') ?? true)));
  if (roles && roles.size < SERVICE_NAMES.length && !env.REDIS_URL?.trim()) {
    problems.push({
      variable: 'SERVICES',
      problem:
        'needs REDIS_URL to run web and worker apart: without Redis the queue lives in one process, which runs both (leave SERVICES unset, or name both)',
    });
  }
  const ca = readCertificates(valid('REDIS_TLS_CA'));
  if (ca && 'problem' in ca) problems.push({ variable: 'REDIS_TLS_CA', problem: ca.problem });
  const [interval, maxInterval] = [valid('POLL_INTERVAL_MS'), valid('POLL_MAX_INTERVAL_MS')];
  if (interval !== undefined && maxInterval !== undefined && maxInterval < interval) {
    problems.push({ variable: 'POLL_MAX_INTERVAL_MS', problem: 'must be at least POLL_INTERVAL_MS' });
  }
  if (!parsed.success || problems.length > 0) {
    throw new ConfigError(
      problems.filter(({ variable, problem }) => !quoted.has(variable) || problem === QUOTED_PROBLEM),
    );
  }
  const e = parsed.data;
  return {
    slack: {
      botToken: e.SLACK_BOT_TOKEN,
      signingSecret: e.SLACK_SIGNING_SECRET,
      appToken: e.SLACK_APP_TOKEN,
      apiUrl: e.SLACK_API_URL === undefined ? undefined : `${e.SLACK_API_URL}/`,
      socketMode: e.SLACK_APP_TOKEN !== undefined,
    },
    mintlify: {
      apiKey: e.MINTLIFY_API_KEY,
      projectId: e.MINTLIFY_PROJECT_ID,
      apiUrl: e.MINTLIFY_API_URL ?? 'https://api.mintlify.com',
    },
    store: {
      redisUrl: e.REDIS_URL,
      namespace: e.STORE_NAMESPACE,
      tls: {
        rejectUnauthorized: e.REDIS_TLS_REJECT_UNAUTHORIZED === 'true',
        ca: ca && 'pem' in ca ? ca.pem : undefined,
      },
    },
    jobRetentionMs: e.JOB_RETENTION_DAYS * 24 * 3_600_000,
    previews: e.PREVIEWS === 'on',
    services: { web: e.SERVICES.includes('web'), worker: e.SERVICES.includes('worker') },
    queueLockMs: e.QUEUE_LOCK_MS,
    port: e.PORT,
    poll: {
      intervalMs: e.POLL_INTERVAL_MS,
      maxIntervalMs: e.POLL_MAX_INTERVAL_MS,
      concurrency: e.POLL_CONCURRENCY,
      requestsPerMinute: e.POLL_REQUESTS_PER_MINUTE,
      slowAfterMs: e.JOB_SLOW_AFTER_MS,
      slowIntervalMs: e.POLL_SLOW_INTERVAL_MS,
    },
    digest: {
      channel: e.DIGEST_CHANNEL,
      cron: e.DIGEST_CRON,
      timezone: e.DIGEST_TIMEZONE,
      top: e.DIGEST_TOP,
      struggles: e.DIGEST_STRUGGLES,
      maxPages: e.DIGEST_MAX_PAGES,
      giveUpMs: e.DIGEST_GIVE_UP_MS,
      siteUrl: e.DOCS_SITE_URL,
    },
    access: { userIds: e.ALLOWED_USER_IDS, channelIds: e.ALLOWED_CHANNEL_IDS },
    logLevel: e.LOG_LEVEL,
  };
}

/** Every environment variable the bot reads (the README and .env.example document each one). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(envSchema.shape);
