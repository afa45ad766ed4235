import { parseArgs } from 'node:util';
import { DEFAULT_JOB_SECONDS, runSandbox } from './runSandbox.js';

/**
 * `npm run sandbox`: try the bot in a terminal, without Slack or a Mintlify account.
 * Options: --job-seconds <n> (how long a job works, default 5), --log-level debug|info|warn|error.
 */
const USAGE = `Usage: npm run sandbox -- [--job-seconds <n>] [--log-level debug|info|warn|error]
  (npm passes options on to the sandbox only after --)
`;

async function main(): Promise<number> {
  let values: { 'job-seconds'?: string; 'log-level'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        'job-seconds': { type: 'string', default: String(DEFAULT_JOB_SECONDS) },
        'log-level': { type: 'string', default: 'warn' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    // An option it does not know, or a value npm handed on without its option (no --).
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const jobSeconds = Number(values['job-seconds']);
  if (!Number.isFinite(jobSeconds) || jobSeconds < 0 || jobSeconds > 3600) {
    process.stderr.write('--job-seconds must be a number of seconds from 0 to 3600\n');
    return 2;
  }
  const logLevel = values['log-level'];
  if (logLevel !== 'debug' && logLevel !== 'info' && logLevel !== 'warn' && logLevel !== 'error') {
    process.stderr.write('--log-level must be debug, info, warn or error\n');
    return 2;
  }

  const quit = new AbortController();
  process.once('SIGINT', () => quit.abort());
  process.once('SIGTERM', () => quit.abort());
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  try {
    await runSandbox({
      input: process.stdin,
      output: process.stdout,
      jobSeconds,
      logLevel,
      interactive,
      color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
      signal: quit.signal,
    });
    return 0;
  } catch (error) {
    // A sandbox that breaks is a bug to report: the stack says where.
    process.stderr.write(
      `the sandbox stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

process.exitCode = await main();
