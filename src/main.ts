import { createDocsAgent } from './app.js';
import { secretsOf } from './config.js';
import { readConfiguration } from './environment.js';
import { createLogger } from './log.js';

/** Entry point: config -> the roles in SERVICES -> start; stops cleanly on SIGTERM and SIGINT. */
async function main(): Promise<void> {
  const config = readConfiguration();
  if (!config) process.exit(1);

  const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });
  // Node would print such an error as it is, and exit: printed through the logger instead, which keeps
  // every secret out of it (given whole, its stack and causes are printed), then the same exit.
  const unexpected = (error: unknown) => {
    logger.error('stopped by an unexpected error:', error);
    process.exit(1);
  };
  process.on('unhandledRejection', unexpected);
  process.on('uncaughtException', unexpected);
  const cannotStart = (error: unknown) => {
    // The logger prints its name, docs-agent, before each line.
    logger.error(`cannot start: ${startProblem(error, config.port)}`);
    process.exit(1);
  };
  // The bot says what failed (the log's line before); it stops as on SIGTERM, and exits 1 for the
  // operator to act (a new SLACK_APP_TOKEN) and the process manager to start it again.
  let failed = () => {};
  const bot = await createDocsAgent(config, { logger, onFailure: () => failed() }).catch(cannotStart);

  // Taken from here on, so a platform stopping the process while it starts is obeyed too.
  let stopping = false;
  const stop = (reason: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${reason}: no new requests; running work finishes or goes back to the queue`);
    // Exit within 10 s whatever happens: platforms kill the process soon after.
    setTimeout(() => process.exit(1), 9_500).unref();
    bot.stop().then(
      () => process.exit(exitCode),
      () => process.exit(1),
    );
  };
  failed = () => stop('stopping', 1);
  process.on('SIGTERM', () => stop('SIGTERM received', 0));
  process.on('SIGINT', () => stop('SIGINT received', 0));

  await bot.start().catch((error: unknown) => {
    if (!stopping) cannotStart(error);
  });
}

/** A start failure in plain words: the port the receiver could not listen on is named. */
function startProblem(error: unknown, port: number): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'EADDRINUSE') {
    return `port ${port} is already in use by another process: stop that process, or set PORT to a free port`;
  }
  if (code === 'EACCES') {
    return `this process may not listen on port ${port} (ports below 1024 need privileges): set PORT to 1024 or above`;
  }
  return error instanceof Error ? error.message : String(error);
}

await main();
