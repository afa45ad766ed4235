import { type Logger, LogLevel } from '@slack/bolt';

/** A logger that says nothing, for code under test that wants one. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

/** A logger that keeps each line as `<level> <message>`, to be read by the test. */
export function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const push =
    (level: string) =>
    (...message: unknown[]) =>
      void lines.push(`${level} ${message.join(' ')}`);
  return {
    lines,
    logger: {
      debug: push('debug'),
      info: push('info'),
      warn: push('warn'),
      error: push('error'),
      setLevel() {},
      getLevel: () => LogLevel.DEBUG,
      setName() {},
    },
  };
}
