/** What a line typed at the sandbox asks for. */
export type SandboxCommand =
  | { kind: 'slash'; text: string }
  /** A message of yours at the top level of #docs (`say …`, or a line that starts `@docs-agent`). */
  | { kind: 'say'; text: string }
  /** `message`: the number shown on a message; without it, the thread of your latest job. */
  | { kind: 'reply'; message: number | undefined; text: string }
  /** "Send to docs agent" on message #n, then the form submitted with the instruction. */
  | { kind: 'shortcut'; message: number; instruction: string; includeThread: boolean }
  /** "Fix with the docs agent" on item `item` (1, 2…) of the digest #n, then its form submitted as filled in. */
  | { kind: 'fix'; message: number; item: number }
  /** A message of yours in your DM with the bot. */
  | { kind: 'dm'; text: string }
  /** You open the bot's Home tab. */
  | { kind: 'home' }
  | { kind: 'wait'; seconds: number }
  | { kind: 'waitFor'; text: string }
  | { kind: 'help' }
  | { kind: 'quit' }
  | { kind: 'nothing' }
  | { kind: 'problem'; text: string };

export const MAX_WAIT_SECONDS = 600;

export const SANDBOX_HELP = [
  'You are @ada in #docs. Messages there and in your DM with the bot are numbered #1, #2… What you can do:',
  '  /docs-agent <instruction>   start a docs agent job (one whose instruction says "fail" fails)',
  '  /docs-agent status          this channel’s recent jobs',
  '  /docs-agent digest          the most visited docs pages of the last 7 days',
  '  /docs-agent help            the bot’s own help',
  '  @docs-agent <instruction>   mention the bot in #docs: a job whose card is the reply under your message',
  '  say <text>                  post a message in #docs (it mentions the bot if it says @docs-agent)',
  '  reply <text>                reply in your latest job’s thread: the reply steers the job',
  '  reply <n> <text>            reply in the thread of message #n; reply <n> @docs-agent <text> mentions',
  '                              the bot there (a follow-up in a job’s thread, else a job about the thread)',
  '  shortcut <n> <instruction> [--thread]',
  '                              “Send to docs agent” on message #n, and submit its form (--thread ticks',
  '                              “Include the whole thread”)',
  '  fix <n> <item>              “Fix with the docs agent” on item <item> (1, 2…) of the digest #n, and',
  '                              submit its form as the bot filled it in',
  '  dm <text>                   send the bot a direct message: a job whose card is the reply under it',
  '  home                        open the bot’s Home tab: your recent jobs, the budget, how to use it',
  '  wait <seconds>              let time pass',
  '  wait-for <text>             wait until the bot shows something containing <text> (60 s at most; at once if it did during the command before)',
  '  help                        this list',
  '  quit                        stop now (at the end of piped input, running jobs finish first)',
].join('\n');

export function parseSandboxCommand(line: string): SandboxCommand {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.startsWith('# ')) return { kind: 'nothing' }; // comments in scripts
  const [word = '', ...words] = trimmed.split(/\s+/);
  const rest = trimmed.slice(word.length).trim();
  switch (word.toLowerCase()) {
    case '/docs-agent':
      return { kind: 'slash', text: rest };
    case '@docs-agent':
      return { kind: 'say', text: trimmed };
    case 'say':
      return rest === ''
        ? {
            kind: 'problem',
            text: 'What should the message say? For example: say Does the CLI retry uploads?',
          }
        : { kind: 'say', text: rest };
    case 'reply':
      return parseReply(words, rest);
    case 'fix': {
      const message = messageNumber(words[0]);
      const item = messageNumber(words[1]);
      return message === undefined || item === undefined || item < 1
        ? { kind: 'problem', text: 'Which digest, which item? For example: fix 2 1' }
        : { kind: 'fix', message, item };
    }
    case 'shortcut':
      return parseShortcut(words);
    case 'dm':
      return rest === ''
        ? { kind: 'problem', text: 'What should the message say? For example: dm Document the --json flag' }
        : { kind: 'dm', text: rest };
    case 'home':
      return { kind: 'home' };
    case 'wait': {
      const seconds = Number(rest);
      if (rest === '' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_SECONDS) {
        return {
          kind: 'problem',
          text: `How long? For example: wait 5 (seconds, up to ${MAX_WAIT_SECONDS})`,
        };
      }
      return { kind: 'wait', seconds };
    }
    case 'wait-for':
      return rest === ''
        ? { kind: 'problem', text: 'Wait for what? For example: wait-for ready for review' }
        : { kind: 'waitFor', text: rest };
    case 'help':
    case '?':
      return { kind: 'help' };
    case 'quit':
    case 'exit':
      return { kind: 'quit' };
    default:
      return {
        kind: 'problem',
        text: word.startsWith('/')
          ? `Only /docs-agent is installed in this workspace. Type help for what you can do.`
          : word.startsWith('@')
            ? `Only @docs-agent is a bot here. Type help for what you can do.`
            : `“${word}” is not something the sandbox knows. Type help for what you can do.`,
      };
  }
}

/** `7` or `#7`. */
function messageNumber(word: string | undefined): number | undefined {
  const number = /^#?(\d+)$/.exec(word ?? '');
  return number ? Number(number[1]) : undefined;
}

function parseReply(words: string[], rest: string): SandboxCommand {
  const message = messageNumber(words[0]);
  const text = message === undefined ? rest : rest.slice((words[0] ?? '').length).trim();
  if (text === '') {
    return { kind: 'problem', text: 'What should the reply say? For example: reply Also add an example' };
  }
  return { kind: 'reply', message, text };
}

function parseShortcut(words: string[]): SandboxCommand {
  const example = 'For example: shortcut 2 Document what this message describes --thread';
  const message = messageNumber(words[0]);
  if (message === undefined) return { kind: 'problem', text: `On which message? ${example}` };
  const rest = words.slice(1);
  const includeThread = rest.includes('--thread');
  const instruction = rest.filter((word) => word !== '--thread').join(' ');
  if (instruction === '') return { kind: 'problem', text: `What should the agent do? ${example}` };
  return { kind: 'shortcut', message, instruction, includeThread };
}
