/** What a line typed at the sandbox asks for. */
export type SandboxCommand =
  | { kind: 'slash'; text: string }
  /** `message`: the number shown on a message; without it, the latest job's thread. */
  | { kind: 'reply'; message: number | undefined; text: string }
  | { kind: 'wait'; seconds: number }
  | { kind: 'waitFor'; text: string }
  | { kind: 'help' }
  | { kind: 'quit' }
  | { kind: 'nothing' }
  | { kind: 'problem'; text: string };

export const MAX_WAIT_SECONDS = 600;

export const SANDBOX_HELP = [
  'You are @ada in #docs. What you can do:',
  '  /docs-agent <instruction>   start a docs agent job (one whose instruction says "fail" fails)',
  '  /docs-agent status          this channel’s recent jobs',
  '  /docs-agent digest          the most visited docs pages of the last 7 days',
  '  /docs-agent help            the bot’s own help',
  '  reply <text>                reply in the latest job’s thread: the reply steers the job',
  '  reply <n> <text>            reply in the thread of message #n',
  '  wait <seconds>              let time pass',
  '  wait-for <text>             wait until the bot shows something containing <text> (60 s at most)',
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
    case 'reply':
      return parseReply(words, rest);
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
          : `“${word}” is not something the sandbox knows. Type help for what you can do.`,
      };
  }
}

function parseReply(words: string[], rest: string): SandboxCommand {
  const number = /^#?(\d+)$/.exec(words[0] ?? '');
  const text = number ? rest.slice((words[0] ?? '').length).trim() : rest;
  if (text === '') {
    return { kind: 'problem', text: 'What should the reply say? For example: reply Also add an example' };
  }
  return { kind: 'reply', message: number ? Number(number[1]) : undefined, text };
}
