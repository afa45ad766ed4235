import { existsSync, statSync } from 'node:fs';
import { type Config, ConfigError, loadConfig, secretsOf } from './config.js';
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
  if (file !== 'none' && existsSync(file)) process.loadEnvFile(file);
  try {
    const config = loadConfig(process.env, options);
    const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) });
    for (const warning of configurationWarnings(process.env, config, options)) logger.warn(warning);
    return config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message.replace('docs-agent cannot start', whoCannotStart)}\n`);
    return undefined;
  }
}
