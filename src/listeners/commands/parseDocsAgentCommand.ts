/**
 * What `/docs-agent <text>` asks for. A word is a subcommand only when it stands alone, so
 * `help me document X` is an instruction, never swallowed by `help`.
 */
export type DocsAgentRequest =
  | { kind: 'empty' }
  | { kind: 'help' }
  | { kind: 'status' }
  | { kind: 'digest' }
  | { kind: 'instruction'; text: string };

const SUBCOMMANDS = new Set(['help', 'status', 'digest']);

export function parseDocsAgentCommand(text: string | undefined): DocsAgentRequest {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return { kind: 'empty' };
  const word = trimmed.toLowerCase();
  if (SUBCOMMANDS.has(word)) return { kind: word as 'help' | 'status' | 'digest' };
  return { kind: 'instruction', text: trimmed };
}
