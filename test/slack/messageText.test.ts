import { describe, expect, it } from 'vitest';
import { messageText } from '../../src/slack/messageText.js';

describe('a message’s words', () => {
  it('are a person’s text when it has some', () => {
    expect(messageText({ text: 'Document X', blocks: [{ type: 'section', text: { text: 'other' } }] })).toBe(
      'Document X',
    );
  });

  it('are an app’s laid-out blocks, not its text (a notification’s line), and its attachments after', () => {
    const app = { bot_id: 'B0APP', text: 'New alert from Link Checker' };
    const blocks = [
      { type: 'header', text: { type: 'plain_text', text: 'Link check failed' } },
      { type: 'section', text: { type: 'mrkdwn', text: '/quickstart links to /install' } },
    ];
    const attachments = [{ title: 'docs-site', fields: [{ title: 'Branch', value: 'main' }] }];
    expect(messageText({ ...app, blocks, attachments })).toBe(
      ['Link check failed', '/quickstart links to /install', 'docs-site', 'Branch: main'].join('\n'),
    );
    // No laid-out blocks (a rich text block repeats the text): the text, then the attachments' words,
    // a fallback that only repeats the text said once.
    const richText = [
      {
        type: 'rich_text',
        elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'x' }] }],
      },
    ];
    expect(
      messageText({ ...app, blocks: richText, attachments: [...attachments, { fallback: app.text }] }),
    ).toBe([app.text, 'docs-site', 'Branch: main'].join('\n'));
  });

  it('are read from an app’s blocks when its text is empty, in the order Slack shows them', () => {
    const blocks = [
      { type: 'header', text: { type: 'plain_text', text: 'Link check failed' } },
      {
        type: 'section',
        text: { type: 'mrkdwn', text: '/quickstart links to /install' },
        fields: [{ type: 'mrkdwn', text: '*Run* 42' }],
      },
      { type: 'divider' },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: 'CI' },
          { type: 'image', image_url: 'x' },
          { type: 'plain_text', text: 'main' },
        ],
      },
      {
        type: 'rich_text',
        elements: [
          {
            type: 'rich_text_section',
            elements: [
              { type: 'text', text: 'Owner ' },
              { type: 'user', user_id: 'U0ADA' },
              { type: 'text', text: ' see ' },
              { type: 'link', url: 'https://ci.example.com/42', text: 'the run' },
            ],
          },
          {
            type: 'rich_text_list',
            elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'fix it' }] }],
          },
        ],
      },
      { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Retry' } }] },
    ];
    expect(messageText({ text: '', blocks })).toBe(
      [
        'Link check failed',
        '/quickstart links to /install',
        '*Run* 42',
        'CI  main',
        'Owner <@U0ADA> see <https://ci.example.com/42|the run>',
        '• fix it',
      ].join('\n'),
    );
  });

  it('are read from legacy attachments, their fallback when they have nothing else', () => {
    const attachments = [
      {
        pretext: 'Deploy failed',
        title: 'docs-site',
        text: 'Build error in mint.json',
        fields: [{ title: 'Branch', value: 'main' }],
      },
      { fallback: 'A chart of deploys' },
    ];
    expect(messageText({ attachments })).toBe(
      ['Deploy failed', 'docs-site', 'Build error in mint.json', 'Branch: main', 'A chart of deploys'].join(
        '\n',
      ),
    );
    expect(messageText({})).toBe('');
  });
});
