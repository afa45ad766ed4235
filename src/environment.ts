import { existsSync } from 'node:fs';
import { type Config, ConfigError, loadConfig } from './config.js';

/**
 * The entry points' one way to read their configuration: `.env` in the working directory when
 * present, then the environment. A problem is printed, every variable at once, and undefined returned.
 */
export function readConfiguration(whoCannotStart = 'docs-agent cannot start'): Config | undefined {
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message.replace('docs-agent cannot start', whoCannotStart)}\n`);
    return undefined;
  }
}
