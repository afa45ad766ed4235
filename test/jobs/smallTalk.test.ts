import { describe, expect, it } from 'vitest';
import { commandWordOf, isStopWord, mistypedCommandOf, smallTalkOf } from '../../src/jobs/smallTalk.js';

describe('smallTalkOf', () => {
  it.each([
    ...['hi', 'Hello there!', 'hey team', 'Good morning, everyone', '?', '...'],
    // Asking about the bot, or trying it, is answered with help too.
    ...['help', 'Help me!', 'hey, can you help me?', 'What can you do?', 'how does this work?'],
    ...['test', 'testing', 'how do I use this?', 'please help', 'are you there <@U0BOT>?'],
    // After a greeting of more than one word, or asked another way.
    ...['Hello there, what can you do?', 'Good morning! How can you help?', 'What can you do for me?'],
    ...['How can I use you?', 'hi bot, what can you help with?', 'help status', 'help digest?'],
    // A wave alone says hello, as "hi" does.
    ...['👋', ':wave:', ':wave::skin-tone-3:', '👋🏽'],
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
    'Merged, thanks!',
    'approved',
    '+1',
    '+1 :tada:',
    'nice one',
    'Wow, nice!',
    'yay!',
    // A wave to someone named is theirs.
    '<@U0JANE> 👋',
    'Thanks 👋',
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
    // Near misses: a thanks or a greeting with something to change.
    'Nice, but also add an example for --json',
    '+1 and mention the flag in the FAQ',
    'Thanks! Now also document X',
    'merged the two install pages into one',
    'Hello there, what can you do with the --json flag?',
    'help page for SSO is wrong',
    'help status codes',
    'wave the fee on the pricing page',
    'set retries to +1',
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
    // The person's jobs, asked for another way.
    ['jobs', 'status'],
    ['my jobs', 'status'],
    ['list', 'status'],
    ['show my jobs', 'status'],
    ['list my jobs please', 'status'],
    ['any update?', 'status'],
    ['Any updates on this?', 'status'],
    ['what’s the status of this?', 'status'],
    ['hello there, status?', 'status'],
    // "list" followed by words naming the jobs, as "jobs" and "status" take them.
    ['list jobs here', 'status'],
    ['list my jobs so far', 'status'],
    ['show me the list of my jobs', 'status'],
  ])('reads %j as asking for %s', (text, word) => expect(commandWordOf(text)).toBe(word));

  it.each([
    'show me the status codes',
    'is the status field documented?',
    'update the status page',
    'document what the digest endpoint returns',
    'digest the changelog into a summary',
    'status codes page needs a 429 row',
    'list the env vars on the config page',
    'update the status on this page',
    'update',
    'any update to the FAQ?',
    'show the list of supported jobs',
    'digest it',
    // "list" followed by what to list is the verb, as "digest it" is.
    'list it',
    'list this',
    'list that',
    'list it here',
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

describe('mistypedCommandOf', () => {
  it.each([
    ['statsu', 'status'],
    ['stats', 'status'],
    ['statuss', 'status'],
    ['Stauts?', 'status'],
    ['hlep', 'help'],
    ['hepl!', 'help'],
    ['digets', 'digest'],
    ['dgest', 'digest'],
  ])('reads a lone “%s” as `%s` mistyped', (text, meant) => {
    expect(mistypedCommandOf(text)).toBe(meant);
  });

  it.each(['status', 'help', 'digest', 'changelog', 'statues page', 'stat', 'helping', 'Helm', 'states', ''])(
    'reads “%s” as no mistyped subcommand',
    (text) => {
      expect(mistypedCommandOf(text)).toBeUndefined();
    },
  );
});
