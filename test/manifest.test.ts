import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEND_TO_AGENT_SHORTCUT } from '../src/jobs/shortcutModal.js';

const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
const manifestText = readFileSync(new URL('../manifest.yml', import.meta.url), 'utf8');

interface Manifest {
  features: {
    slash_commands: Array<{ command: string; usage_hint?: string; url?: string }>;
    shortcuts: Array<{ name: string; type: string; callback_id: string }>;
    app_home: Record<string, boolean>;
  };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { request_url?: string; bot_events: string[] };
    interactivity: { is_enabled: boolean; request_url?: string };
    socket_mode_enabled: boolean;
  };
}

function validator() {
  // Slack's schema carries keywords of its own ("_note", "regex"), so strict mode is off; "regex" is
  // Slack's spelling of "pattern" (for background_color), so it is taught to ajv rather than ignored.
  const ajv = new Ajv({ allErrors: true, strict: false });
  // ajv-formats is CommonJS; under NodeNext its default export arrives one level down.
  addFormatsPlugin.default(ajv);
  ajv.addKeyword({
    keyword: 'regex',
    type: 'string',
    schemaType: 'string',
    validate: (pattern: string, value: string) => new RegExp(pattern).test(value),
  });
  return ajv.compile(readJson('./contracts/manifest.schema.json') as object);
}

describe('manifest.yml', () => {
  const validate = validator();
  const manifest = parse(manifestText) as Manifest;

  it('is a valid Slack app manifest', () => {
    const valid = validate(manifest);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('asks for exactly the bot scopes the bot uses', () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(
      [
        'channels:history',
        'chat:write',
        'commands',
        'groups:history',
        'reactions:write',
        'users:read',
        'app_mentions:read',
        'im:history',
      ].sort(),
    );
  });

  it('offers /docs-agent with a usage hint, sent to /slack/events', () => {
    const command = manifest.features.slash_commands.find((c) => c.command === '/docs-agent');
    expect(command?.usage_hint).toMatch(/instruction/);
    expect(command?.url).toBe('https://YOUR-APP-HOST/slack/events');
  });

  it('subscribes to messages in public and private channels and enables interactivity', () => {
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(['message.channels', 'message.groups']),
    );
    expect(manifest.settings.event_subscriptions.request_url).toBe('https://YOUR-APP-HOST/slack/events');
    expect(manifest.settings.interactivity).toEqual({
      is_enabled: true,
      request_url: 'https://YOUR-APP-HOST/slack/events',
    });
    expect(manifest.settings.socket_mode_enabled).toBe(false);
  });

  it('offers the message shortcut, the Home tab and the DM, and subscribes to mentions, DMs and Home opens', () => {
    expect(manifest.features.shortcuts).toEqual([
      expect.objectContaining({
        type: 'message',
        callback_id: SEND_TO_AGENT_SHORTCUT,
        name: 'Send to docs agent',
      }),
    ]);
    expect(manifest.features.app_home).toEqual({
      home_tab_enabled: true,
      messages_tab_enabled: true,
      messages_tab_read_only_enabled: false,
    });
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(
      expect.arrayContaining(['app_mention', 'message.im', 'app_home_opened']),
    );
  });

  it('fails validation when a key is misspelt or a value breaks a rule', () => {
    const misspelt = parse(manifestText.replace('always_online:', 'allways_online:'));
    expect(validate(misspelt)).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ additionalProperty: 'allways_online' });

    const badColour = parse(manifestText) as { display_information: { background_color: string } };
    badColour.display_information.background_color = 'green';
    expect(validate(badColour)).toBe(false);

    const noSlash = parse(manifestText.replace('- command: /docs-agent', '- command: docs-agent'));
    expect(validate(noSlash)).toBe(false);
  });
});
