import { existsSync, readFileSync, statSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { type Config, ConfigError, ENVIRONMENT_VARIABLES, loadConfig, secretsOf } from './config.js';
import { configurationWarnings } from './configWarnings.js';
import { createLogger } from './log.js';

/**
 * The entry points' one way to read their configuration: the file ENV_FILE names (`.env` in the
 * working directory by default, when present; `none` for no file), then the environment, which
 * wins. A problem is printed, every variable at once, and undefined returned; what is likely
 * not meant (a misspelt variable) is logged as a warning, once, and the bot starts.
 */
export function readConfiguration(
  whoCannotStart = 'docs-agent cannot start',
  options: { receivesRequests?: boolean } = {},
): Config | undefined {
  const named = process.env.ENV_FILE?.trim();
  if (named && named !== 'none' && !(existsSync(named) && statSync(named).isFile())) {
    process.stderr.write(
      `${whoCannotStart}: ENV_FILE names ${named}, which is not a file (none: read no file)\n`,
    );
    return undefined;
  }
  const file = named || '.env';
  // The file does not override the environment: only what the environment lacks is read from it.
  const fromEnvironment = new Set(Object.keys(process.env));
  const read = file !== 'none' && existsSync(file);
  if (read && !statSync(file).isFile()) {
    process.stderr.write(
      `${whoCannotStart}: ${file} is not a file (a directory?): make it the file of variables, remove it, or set ENV_FILE=none to read no file\n`,
    );
    return undefined;
  }
  let cut: Array<{ variable: string; problem: string }> = [];
  try {
    if (read) {
      const text = textOf(readFileSync(file));
      // As process.loadEnvFile does: what the environment has already is not replaced.
      for (const [variable, value] of Object.entries(parseEnv(text))) {
        if (process.env[variable] === undefined) process.env[variable] = value;
      }
      cut = valuesCutAtHash(file, text, fromEnvironment);
    }
  } catch (error) {
    // Unreadable (its permissions, a file that went away): said in plain words, not as a stack trace.
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `${whoCannotStart}: ${file} could not be read (${reason}): let this process read it, or set ENV_FILE=none to read no file\n`,
    );
    return undefined;
  }
  const cutNames = new Set(cut.map(({ variable }) => variable));
  let config: Config | undefined;
  const problems = [...cut];
  try {
    config = loadConfig(process.env, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // A value cut short is told as that alone: what is left of it may be wrong in other ways too.
    problems.push(...error.problems.filter(({ variable }) => !cutNames.has(variable)));
  }
  if (!config || problems.length > 0) {
    const message = new ConfigError(problems).message;
    process.stderr.write(`${message.replace('docs-agent cannot start', whoCannotStart)}\n`);
    return undefined;
  }
  const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });
  for (const warning of configurationWarnings(process.env, config, options)) logger.warn(warning);
  return config;
}

/**
 * A .env file's text: UTF-16 when it starts with that encoding's byte order mark (Windows
 * PowerShell 5.1's `>` and `Out-File` write UTF-16LE), UTF-8 otherwise, without the byte order mark
 * an editor may save first (Windows PowerShell, older Notepad), which would be read as part of the
 * first variable's name.
 */
function textOf(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.subarray(2).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    // Node reads UTF-16 little-endian only: each pair of bytes swapped makes it so.
    return Buffer.from(bytes.subarray(2, bytes.length - (bytes.length % 2)))
      .swap16()
      .toString('utf16le');
  }
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}

/**
 * The bot's variables whose line in the .env file has a # right after other characters (DIGEST_CRON's
 * `5#L`, a password's #): a .env file reads a # as the start of a comment, wherever it is in an
 * unquoted value, and drops the rest, so the bot would read another value than the one written
 * (a schedule of every Friday for that of the last Friday of the month), or none at all for a value
 * that starts with one (DIGEST_CHANNEL=#docs). A # after a space, or one right after the = and
 * followed by a space, is taken as the comment it most likely is. Of a value, nothing is told: it
 * may be a secret.
 */
function valuesCutAtHash(
  file: string,
  text: string,
  fromEnvironment: ReadonlySet<string>,
): Array<{ variable: string; problem: string }> {
  const parsed = parseEnv(text);
  const lines = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const found = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$/.exec(line);
    if (found?.[1] !== undefined && found[2] !== undefined) lines.set(found[1], found[2]);
  }
  return ENVIRONMENT_VARIABLES.flatMap((variable) => {
    const raw = lines.get(variable);
    const value = parsed[variable];
    if (fromEnvironment.has(variable) || raw === undefined || value === undefined) return [];
    const written = raw.trim();
    if (/^["'`]/.test(written) || written === value) return [];
    const quote = `wrap the value in double quotes (${variable}="…")`;
    // Glued to the = and to a word (DIGEST_CHANNEL=#docs): read as empty. `X=# a note` stays a comment.
    if (value === '' && /^#\S/.test(raw)) {
      return [
        {
          variable,
          problem: `in ${file} starts with a #, where .env files start a comment, so the value would be read as empty: ${quote}`,
        },
      ];
    }
    if (value === '' || !written.startsWith(`${value}#`)) return [];
    return [
      {
        variable,
        problem: `in ${file} has a # right after other characters, where .env files start a comment, so the rest of the value would be dropped: ${quote}`,
      },
    ];
  });
}
