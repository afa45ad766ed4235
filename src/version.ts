import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/** The bot's name and version, as sent in the `User-Agent` of every call to Mintlify. */
const BOT_NAME = pkg.name;
const BOT_VERSION = pkg.version;
export const USER_AGENT = `${BOT_NAME}/${BOT_VERSION} node/${process.versions.node}`;
