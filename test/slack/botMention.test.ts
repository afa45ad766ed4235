import { describe, expect, it } from 'vitest';
import { withoutBotMention } from '../../src/slack/botMention.js';

describe('the bot’s mention taken out of a message', () => {
  it('takes the spaces around it, and no other', () => {
    expect(withoutBotMention('<@U0BOT> document X', 'U0BOT')).toBe('document X');
    expect(withoutBotMention('hey <@U0BOT|docs-agent>   document X', 'U0BOT')).toBe('hey document X');
    expect(withoutBotMention('document X <@U0BOT>', 'U0BOT')).toBe('document X');
    expect(withoutBotMention('first line\n<@U0BOT>  then this', 'U0BOT')).toBe('first line\nthen this');
    expect(withoutBotMention('<@U0BOT>\n```\nretry:\n  attempts: 3\n\tmax: 30s\n```', 'U0BOT')).toBe(
      '```\nretry:\n  attempts: 3\n\tmax: 30s\n```',
    );
    // Someone else's mention stays.
    expect(withoutBotMention('ask <@U0CAT>  first', 'U0BOT')).toBe('ask <@U0CAT>  first');
  });
});
