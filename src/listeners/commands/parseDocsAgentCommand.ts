import {
  commandWordOf,
  isStopWord,
  mistypedCommandOf,
  onlyMentions,
  smallTalkOf,
} from '../../jobs/smallTalk.js';

/**
 * What `/docs-agent <text>` asks for. A word is a subcommand only when it stands alone (a "?" or a
 * "." after it aside), so `help me document X` is an instruction, never swallowed by `help`.
 */
export type DocsAgentRequest =
  | { kind: 'empty' }
  | { kind: 'help' }
  | { kind: 'status' }
  | { kind: 'digest' }
  /**
   * Words that are no instruction: a greeting, a thanks, "test", "what can you do?" (as every door
   * reads them), a mention of people alone (`@cat`), a lone "stop", which no door can do, or a
   * subcommand mistyped (`meant`). Sent, each would start a job of that name.
   */
  | { kind: 'not_an_instruction'; text: string; stop: boolean; meant?: 'help' | 'status' | 'digest' }
  | { kind: 'instruction'; text: string };

const SUBCOMMAND = /^(help|status|digest)[.!?]*$/i;
// `help status`: the help, which says what each subcommand does.
const HELP_ON = /^help\s+(?:help|status|digest)[.!?]*$/i;
// `@cat`, `@here`: the manifest's should_escape: false has Slack send a mention as the text typed.
const TYPED_MENTIONS = /^(?:@[\p{L}\p{N}._-]+[\s.,;:!?…]*)+$/u;

export function parseDocsAgentCommand(text: string | undefined): DocsAgentRequest {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return { kind: 'empty' };
  const subcommand = SUBCOMMAND.exec(trimmed)?.[1];
  if (subcommand) return { kind: subcommand.toLowerCase() as 'help' | 'status' | 'digest' };
  if (HELP_ON.test(trimmed)) return { kind: 'help' };
  // `status please`, `hi, digest?`: read as a mention or a DM reads them, not as a job called that.
  const word = commandWordOf(trimmed);
  if (word) return { kind: word };
  // `statsu`: a subcommand mistyped, not a job called that.
  const meant = mistypedCommandOf(trimmed);
  if (meant) return { kind: 'not_an_instruction', text: trimmed, stop: false, meant };
  const stop = isStopWord(trimmed);
  // A call to people says nothing to change, as a mention or a DM of only that gets the help.
  const calls = TYPED_MENTIONS.test(trimmed) || onlyMentions(trimmed);
  if (stop || calls || smallTalkOf(trimmed) !== undefined)
    return { kind: 'not_an_instruction', text: trimmed, stop };
  return { kind: 'instruction', text: trimmed };
}
