import { createThreadedDocsAgent } from './app.js';
import { secretsOf } from './config.js';
import { readConfiguration } from './environment.js';
import { createLogger } from './log.js';

/** Entry point: config -> app -> start; stops cleanly on SIGTERM and SIGINT. */
async function main(): Promise<void> {
  const config = readConfiguration();
  if (!config) process.exit(1);

  const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });
  const onFatal = (error: Error) => {
    logger.error(`docs-agent stops: ${error.message}`);
    process.exit(1);
  };
  const bot = await createThreadedDocsAgent(config, { logger, onFatal }).catch((error: unknown) => {
    logger.error(`docs-agent cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
  try {
    await bot.start();
  } catch (error) {
    logger.error(`docs-agent cannot start: ${error instanceof Error ? error.message : String(error)}`);
    await bot.stop();
    process.exit(1);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received: finishing in-flight work, then exiting`);
    // Exit within 10 s whatever happens: platforms kill the process soon after.
    setTimeout(() => process.exit(1), 9_500).unref();
    bot.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

await main();
