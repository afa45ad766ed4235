import { expect, it } from 'vitest';
import { slackToPlainText } from '../../src/slack/plainText.js';

const noNames = async () => undefined;

it('passes on what a person typed as written: an escaped entity they typed stays an entity, not markup', async () => {
  // Slack escapes `&`, `<` and `>` in what people type: "use &lt;br&gt; not <br>" arrives as below.
  const typed = 'use &amp;lt;br&amp;gt; not &lt;br&gt;, &amp;amp; stays';

  expect(await slackToPlainText(typed, noNames)).toBe('use &lt;br&gt; not <br>, &amp; stays');
});
