import { describe, expect, it } from 'vitest';
import { messageLines } from '../../sandbox/blockKitText.js';
import { type MarkupContext, markupToTerminal } from '../../sandbox/slackMarkup.js';
import { styleFor } from '../../sandbox/terminal.js';

const now = new Date('2025-06-02T09:00:00Z');
const context = (color: boolean): MarkupContext => ({
  style: styleFor(color),
  now: () => now,
  userName: (id) => ({ U0ADA: 'ada' })[id],
  channelName: (id) => ({ C0DOCS: 'docs' })[id],
  linkName: (url) => (url === 'https://slack.com/archives/C0DOCS/p1700000000000100' ? '#1' : undefined),
});
const plain = (text: string) => markupToTerminal(text, context(false));
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

describe('the sandbox shows Slack markup readably', () => {
  it('names people and channels, and spells links out', () => {
    expect(plain('Docs agent job for <@U0ADA> in <#C0DOCS> (<@U0BOB|bob>, <!here>)')).toBe(
      'Docs agent job for @ada in #docs (@bob, @here)',
    );
    expect(plain('See <https://github.com/acme/docs/pull/7|the pull request> or <https://x.dev>')).toBe(
      'See the pull request (https://github.com/acme/docs/pull/7) or https://x.dev',
    );
    expect(plain('<https://slack.com/archives/C0DOCS/p1700000000000100|thread>')).toBe('thread (#1)');
  });

  it('reads Slack date tokens as times, relative to now', () => {
    const minutesAgo = new Date(now.getTime() - 5 * 60_000);
    expect(plain(`started <!date^${seconds(now)}^{ago}|2025-06-02T09:00:00Z>`)).toBe('started just now');
    expect(plain(`started <!date^${seconds(minutesAgo)}^{ago}|x>`)).toBe('started 5 minutes ago');
    expect(plain(`<!date^${seconds(now)}^{date_short_pretty}|x>`)).toBe('today');
    expect(plain('<!date^oops^{ago}|the fallback>')).toBe('the fallback');
  });

  it('styles bold, italic and code at a terminal, and leaves plain words when piped', () => {
    const text = '*Pull request ready*  ·  _all visitors_  ·  job `job-1`  ·  2 * 3 * 4';
    expect(plain(text)).toBe('Pull request ready  ·  all visitors  ·  job job-1  ·  2 * 3 * 4');
    expect(markupToTerminal(text, context(true))).toBe(
      '\x1b[1mPull request ready\x1b[22m  ·  \x1b[3mall visitors\x1b[23m  ·  job \x1b[36mjob-1\x1b[39m  ·  2 * 3 * 4',
    );
  });

  it('decodes what Slack escapes, draws quotes and the bot’s emoji', () => {
    expect(plain('>Document &lt;b&gt; &amp; co\n:white_check_mark: done :unknown_emoji:')).toBe(
      '│ Document <b> & co\n✅ done :unknown_emoji:',
    );
  });

  it('shows Block Kit as lines: header, fields, context, buttons', () => {
    const lines = messageLines(
      {
        text: 'fallback',
        blocks: [
          { type: 'header', text: { type: 'plain_text', text: 'Docs digest' } },
          { type: 'section', fields: [{ type: 'mrkdwn', text: '*Human visitors*\n1,234' }] },
          { type: 'context', elements: [{ type: 'mrkdwn', text: ':hourglass_flowing_sand: Working on it' }] },
          {
            type: 'actions',
            elements: [
              {
                type: 'button',
                text: { type: 'plain_text', text: 'Open pull request' },
                url: 'https://github.com/acme/docs/pull/7',
              },
            ],
          },
          { type: 'divider' },
        ],
      },
      context(false),
    );
    expect(lines).toEqual([
      'Docs digest',
      'Human visitors  1,234',
      '⏳ Working on it',
      '[Open pull request → https://github.com/acme/docs/pull/7]',
      '─'.repeat(40),
    ]);
  });
});
