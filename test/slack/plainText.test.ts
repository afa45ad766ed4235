import { expect, it } from 'vitest';
import { slackToPlainText } from '../../src/slack/plainText.js';

const noNames = async () => undefined;

it('passes on what a person typed as written: an escaped entity they typed stays an entity, not markup', async () => {
  // Slack escapes `&`, `<` and `>` in what people type: "use &lt;br&gt; not <br>" arrives as below.
  const typed = 'use &amp;lt;br&amp;gt; not &lt;br&gt;, &amp;amp; stays';

  expect(await slackToPlainText(typed, noNames)).toBe('use &lt;br&gt; not <br>, &amp; stays');
});

it('reads each kind of Slack markup as the person saw it: names, channels, links once, addresses, special mentions', async () => {
  const names = async (id: string) => (id === 'U0ADA' ? 'Ada' : undefined);
  const text = [
    '<@U0ADA> and <@U0GONE>, see <#C0DOCS|docs>',
    '<https://x.example/a|the guide>, <https://x.example/b|https://x.example/b>, <https://x.example/c>',
    '<mailto:ada@example.com|ada@example.com> or <mailto:bob@example.com>',
    '<!here> <!subteam^S0WRITERS|@writers> <!date^1700000000^{date}|Nov 14>',
  ].join('\n');

  expect(await slackToPlainText(text, names)).toBe(
    [
      '@Ada and @U0GONE, see #docs',
      'the guide (https://x.example/a), https://x.example/b, https://x.example/c',
      'ada@example.com or bob@example.com',
      '@here @writers Nov 14',
    ].join('\n'),
  );
});
