/**
 * Words to the bot that are no instruction for the agent. Sent as one, a "thanks" under a finished
 * job would set the agent working again, and a "hi" in the bot's DM would start a job called "hi":
 * each spends one of the project's hourly agent uses.
 */

const GREETINGS = new Set(['hi', 'hello', 'hey', 'hiya', 'howdy', 'yo', 'morning', 'afternoon', 'evening']);
const THANKS = new Set([
  ...['thanks', 'thank', 'thx', 'ty', 'tysm', 'cheers', 'appreciated', 'appreciate', 'kudos'],
  ...['ok', 'okay', 'kk', 'k', 'cool', 'great', 'nice', 'awesome', 'perfect', 'lgtm', 'noted'],
  ...['brilliant', 'amazing', 'excellent', 'wonderful', 'sweet', 'neat', 'good', 'wow', 'yay'],
  // What reviewers write under a ready pull request.
  ...['merged', 'approved', 'shipped'],
]);
// Words that go with the ones above without making an instruction of them.
const FILLERS = new Set([
  ...['you', 'u', 'so', 'much', 'very', 'a', 'lot', 'again', 'all', 'everyone', 'team', 'guys', 'folks'],
  ...['there', 'mate', 'work', 'job', 'sounds', 'got', 'it', 'and', 'really', 'many', 'bot'],
  ...['docs-agent', 'for', 'that', 'looks', 'look', 'to', 'me', 'one'],
  ...["that's", 'thats', "it's", 'its', 's'],
]);
// Mentions of people (thanking one by name), Slack's emoji codes, pictographs, emoticons and a "+1".
const MENTION = /<[@!][^>]*>/g;
const EMOJI =
  /:[a-z0-9_+'-]+:|\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}]|\u{FE0F}|\u{200D}|[:;]-?[)(DPp]|<3|(?<!\w)\+1(?!\d)/gu;
// A wave says hello, as "hi" does.
const WAVE = /:wave:|\u{1F44B}/u;
const MOST_WORDS = 8;
// Asking what the bot is or does, or trying it: answered with help, as a greeting is (after any
// greeting, "hello there", or "please" before it). Anything longer is an instruction.
const ABOUT_THE_BOT = new Set([
  ...['help', 'help me', 'can you help', 'can you help me', 'what can you do', 'what do you do'],
  ...['what are you', 'who are you', 'how does this work', 'how does it work', 'how do you work'],
  ...['how do i use this', 'how do i use you', 'how do i use it', 'how to use', 'how to use this'],
  ...['usage', 'commands', 'test', 'testing', 'are you there', 'are you working', 'is this working'],
  ...['what can you do for me', 'what can you help with', 'how can you help', 'how can you help me'],
  ...['how can i use you', 'how can i use this', 'how can i use it', 'help status', 'help digest'],
]);
const POLITE = new Set(['please', 'pls', 'plz']);
// What opens a message without saying anything ("hello there", "good morning, bot").
const OPENING = new Set([...GREETINGS, ...POLITE, 'there', 'good', 'bot', 'docs-agent']);
const STATUS_QUESTION = new Set([
  'what',
  "what's",
  'whats',
  's',
  'is',
  'the',
  'show',
  'me',
  'my',
  'check',
  'any',
  'job',
  'jobs',
]);
// Asking for the jobs: `status`, `jobs` or `list` alone or asked for ("show my jobs"), or an
// "update", asked for ("any update?"), followed by words naming the job ("of this").
const STATUS_WORDS = new Set(['status', 'jobs', 'list']);
const ASKED_STATUS_WORDS = new Set(['update', 'updates', 'news', 'progress']);
// What "list" followed by says is an instruction: it names what to list.
const LISTED_THINGS = new Set(['it', 'this', 'that']);
const ABOUT_THE_JOB = new Set([
  ...['of', 'on', 'for', 'this', 'it', 'that', 'the', 'my', 'our', 'all', 'job', 'jobs', 'here', 'now'],
  ...['so', 'far'],
]);

/**
 * `greeting` (answered with help; punctuation alone, a "?", is one too, and so are a wave and asking
 * what the bot does, "help" or "test"), `thanks` (left unanswered; so is an emoji other than a wave),
 * or undefined for an instruction. `text` is as Slack delivered it (mentions of people as `<@U…>`,
 * `&`, `<` and `>` escaped).
 */
export function smallTalkOf(text: string): 'greeting' | 'thanks' | undefined {
  const withoutMentions = text
    .replace(MENTION, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
  const withoutEmoji = withoutMentions.replace(EMOJI, ' ');
  const words = wordsOf(withoutEmoji);
  if (words.length === 0) {
    if (withoutMentions.trim() === '') return undefined; // nothing said (a bare mention has its own answer)
    if (withoutEmoji.trim() === withoutMentions.trim()) return 'greeting'; // a "?"
    // A wave is a hello (unless it is to someone named); any other emoji a thanks or an OK.
    return WAVE.test(withoutMentions) && text.search(MENTION) === -1 ? 'greeting' : 'thanks';
  }
  if (words.length > MOST_WORDS) return undefined;
  if (ABOUT_THE_BOT.has(unwrapped(words).join(' '))) return 'greeting';
  if (!words.every((word) => GREETINGS.has(word) || THANKS.has(word) || FILLERS.has(word))) return undefined;
  if (words.some((word) => GREETINGS.has(word))) return 'greeting';
  return words.some((word) => THANKS.has(word)) ? 'thanks' : undefined;
}

/**
 * A lone "stop" or "cancel": Mintlify's API has no way to stop a job, and sent as an instruction it
 * would start a job (or set a finished one working again) called "stop".
 */
export function isStopWord(text: string): boolean {
  return /^(?:please[\s,]+)?(?:stop|cancel|abort|quit|halt)(?:[\s,]+(?:it|this|that|the job|this job|now|please))*[.!]*$/i.test(
    text.trim(),
  );
}

/**
 * The slash command's own words, said to the bot in a mention or its DM rather than after
 * `/docs-agent`: alone, or with a greeting or a "please" around them (`hi, status?`, `status
 * please`), as help is read; `jobs`, `list` and "any update?" ask for the status too. Anything more
 * (`digest the API page`, `list the env vars`) is an instruction.
 */
export function commandWordOf(text: string): 'status' | 'digest' | undefined {
  const said = unwrapped(wordsOf(text));
  // "what's the status?", "show me my jobs": asking for it, not an instruction called that.
  const first = said.findIndex((w) => !STATUS_QUESTION.has(w));
  const at = first === -1 ? said.length - 1 : first;
  if (at < 0 || at > 4) return undefined;
  const [word, after] = [said[at]!, said.slice(at + 1)];
  if (word === 'digest') return after.length === 0 ? 'digest' : undefined;
  const asked = STATUS_WORDS.has(word) || (at > 0 && ASKED_STATUS_WORDS.has(word));
  // A "list" followed by a pronoun is the verb of an instruction ("list it" says what to list).
  if (word === 'list' && after.some((w) => LISTED_THINGS.has(w))) return undefined;
  return asked && after.every((w) => ABOUT_THE_JOB.has(w)) ? 'status' : undefined;
}

const COMMAND_WORDS = ['help', 'status', 'digest'] as const;
/** Words one slip away from a subcommand that a docs team may well mean as they are (a page, a tool). */
const NOT_SLIPS = new Set([
  'helm',
  'held',
  'hell',
  'heap',
  'hemp',
  'kelp',
  'yelp',
  'whelp',
  'helps',
  'states',
  'statue',
  'stratus',
]);

/**
 * The subcommand a lone word is one slip away from (`statsu`, `hlep`, `digets`: a letter wrong,
 * missing, extra, or two swapped): a typo, not an instruction called that, which would spend an
 * agent use on a job nobody meant.
 */
export function mistypedCommandOf(text: string): (typeof COMMAND_WORDS)[number] | undefined {
  const words = wordsOf(text);
  const word = words.length === 1 ? words[0]! : undefined;
  if (word === undefined || NOT_SLIPS.has(word)) return undefined;
  return COMMAND_WORDS.find((command) => word !== command && oneSlipApart(word, command));
}

/** Whether `a` becomes `b` with one letter changed, dropped, added, or two neighbours swapped. */
function oneSlipApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  const rest = (from: string, skip: number) => from.slice(at + skip);
  if (a.length === b.length) {
    const swapped = a[at] === b[at + 1] && a[at + 1] === b[at] && rest(a, 2) === rest(b, 2);
    return swapped || rest(a, 1) === rest(b, 1);
  }
  return a.length > b.length ? rest(a, 1) === rest(b, 0) : rest(a, 0) === rest(b, 1);
}

/** The words of a message, lower-cased, without their punctuation. */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}'-]+/u)
    .map((word) => word.replace(/^['-]+|['-]+$/g, ''))
    .filter((word) => word !== '');
}

/** The words without a greeting or a "please" before them, nor the bot's name or a "please" after them. */
function unwrapped(words: string[]): string[] {
  let from = 0;
  while (from < words.length && OPENING.has(words[from]!)) from += 1;
  let to = words.length;
  while (to > from && (POLITE.has(words[to - 1]!) || /^(docs-agent|bot)$/.test(words[to - 1]!))) to -= 1;
  return words.slice(from, to);
}

/** A reply between people, not meant for the agent. */
const BETWEEN_PEOPLE = '//';

/** Mentions of people: a person, a user group, `@here`, `@channel`, `@everyone`. */
const PEOPLE_MENTION = /<(?:@|!subteam\^|!here|!channel|!everyone)[^>]*>/g;

/** `@cat`, `@here` or a group, and nothing else: a call to people, not words for the agent. */
export function onlyMentions(text: string): boolean {
  const rest = text.replace(PEOPLE_MENTION, '');
  return rest !== text && rest.replace(/[\s.,;:!?…]+/g, '') === '';
}

/** A reply in a job's thread meant for people: `//` before it, or only mentions of people. */
export function betweenPeople(text: string): boolean {
  return text.trim().startsWith(BETWEEN_PEOPLE) || onlyMentions(text);
}
