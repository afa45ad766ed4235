import { describe, expect, it } from 'vitest';
import { commandWordOf, isStopWord, smallTalkOf } from '../../src/jobs/smallTalk.js';

describe('smallTalkOf', () => {
  it.each([
    ...['hi', 'Hello there!', 'hey team', 'Good morning, everyone', '?', '...'],
    // Asking about the bot, or trying it, is answered with help too.
    ...['help', 'Help me!', 'hey, can you help me?', 'What can you do?', 'how does this work?'],
    ...['test', 'testing', 'how do I use this?', 'please help', 'are you there <@U0BOT>?'],
  ])('%j is a greeting', (text) => {
    expect(smallTalkOf(text)).toBe('greeting');
  });

  it.each([
    'thanks',
    'Thank you so much!!',
    'thx :pray:',
    'LGTM',
    'ok.',
    '👍',
    ':+1::skin-tone-2:',
    '🙏🏽',
    'Great work 🎉',
    'ok thanks',
    'Awesome, thanks!',
    'perfect, thank you',
    'thanks :)',
    'thank u',
    'nice work team',
    'cheers mate',
    'thanks <@U0JANE>!',
    '<@U0JANE> thanks &lt;3',
    'good',
    // What reviewers write under a ready pull request.
    'looks good to me',
    'Thanks, that’s perfect!',
    "it's great",
  ])('%j is a thanks', (text) => {
    expect(smallTalkOf(text)).toBe('thanks');
  });

  it.each([
    '',
    '<@U0JANE>',
    'Document the --json flag',
    'Thanks, now also document the --json flag',
    'ok, add an example with curl',
    'Hi, please document the --json flag',
    'no',
    'fix the typo',
    'ok do it',
    'help me document the --json flag',
    'test the install steps on Windows',
    'stop',
    'test morning',
    'usage of the API',
    'thanks thanks thanks thanks thanks thanks thanks thanks thanks',
    // A review with something to change is an instruction.
    'looks good to me, but add an example',
    'that is good except the title',
  ])('%j is no small talk', (text) => {
    expect(smallTalkOf(text)).toBeUndefined();
  });
});

describe('smallTalkOf: questions to the agent under its card', () => {
  // Under a card, a thanks is left unanswered: a question read as one is never answered at all.
  it.each(['is it ok?', 'is that good?', 'is it all good?', 'so is it good?', 'is it good for you?'])(
    '%j is no small talk',
    (text) => {
      expect(smallTalkOf(text)).toBeUndefined();
    },
  );
});

describe('commandWordOf', () => {
  it('finds the slash command’s words said alone, and nothing in an instruction', () => {
    expect(commandWordOf('status')).toBe('status');
    expect(commandWordOf(' Digest!! ')).toBe('digest');
    expect(commandWordOf('Document the status page')).toBeUndefined();
  });

  it.each([
    ['what’s the status?', 'status'],
    ['show me the digest', 'digest'],
    ['hi, status please', 'status'],
    ['check my jobs status', 'status'],
  ])('reads %j as asking for %s', (text, word) => expect(commandWordOf(text)).toBe(word));

  it.each([
    'show me the status codes',
    'is the status field documented?',
    'update the status page',
    'document what the digest endpoint returns',
    'digest the changelog into a summary',
  ])('reads %j as an instruction', (text) => expect(commandWordOf(text)).toBeUndefined());
});

describe('isStopWord', () => {
  it.each([
    'stop',
    'Stop.',
    'cancel',
    'stop it please',
    'stop, please',
    'cancel this job',
    'stop now',
    'please stop',
  ])('%j asks to stop', (text) => expect(isStopWord(text)).toBe(true));
  it.each(['stop using the old API', 'cancel the deprecated flag in the docs', 'stopwatch', 'do not stop'])(
    '%j is an instruction',
    (text) => expect(isStopWord(text)).toBe(false),
  );
});
