import { format } from 'node:util';
import { type Logger, LogLevel } from '@slack/bolt';

const ORDER: Record<LogLevel, number> = {
  [LogLevel.DEBUG]: 10,
  [LogLevel.INFO]: 20,
  [LogLevel.WARN]: 30,
  [LogLevel.ERROR]: 40,
};

export type LogSink = (line: string) => void;

/**
 * The one logger of the bot (Bolt's Logger interface, so Bolt logs through it too).
 * Every line passes through `redact`, so a token, signing secret or API key that slips into
 * an error message or a request dump never reaches the log.
 */
export function createLogger(options: {
  level: `${LogLevel}`;
  secrets: readonly string[];
  sink?: LogSink;
  name?: string;
}): Logger {
  const secrets = options.secrets.filter((secret) => secret.length >= 4);
  const sink = options.sink ?? ((line: string) => process.stderr.write(`${line}\n`));
  let level = options.level as LogLevel;
  let name = options.name ?? 'docs-agent';

  const write =
    (at: LogLevel) =>
    (...messages: unknown[]) => {
      if (ORDER[at] < ORDER[level]) return;
      const text = redact(format(...messages), secrets);
      sink(`${new Date().toISOString()} ${at.toUpperCase().padEnd(5)} ${name} ${text}`);
    };

  return {
    debug: write(LogLevel.DEBUG),
    info: write(LogLevel.INFO),
    warn: write(LogLevel.WARN),
    error: write(LogLevel.ERROR),
    setLevel: (next) => {
      level = next;
    },
    getLevel: () => level,
    setName: (next) => {
      name = next;
    },
  };
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out;
}

/** A URL without the user name and password it may carry, fit for a log line; `name` if it does not parse. */
export function withoutCredentials(url: string, name: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return name;
  }
}
