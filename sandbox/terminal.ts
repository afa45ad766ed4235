import type { Writable } from 'node:stream';
import { clearLine, cursorTo, type Interface } from 'node:readline';

/** Text styles: ANSI escapes at a terminal, nothing when the output is piped or NO_COLOR is set. */
export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  strike(text: string): string;
  code(text: string): string;
}

const ansi = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const same = (text: string) => text;

export function styleFor(color: boolean): Style {
  if (!color) return { bold: same, dim: same, italic: same, strike: same, code: same };
  const bold = ansi(1, 22);
  // Bold and dim end with the same code: a bold word inside a dim line must not end the dimming.
  const dim = (text: string) => ansi(2, 22)(text.replaceAll('\x1b[22m', '\x1b[22m\x1b[2m'));
  return { bold, dim, italic: ansi(3, 23), strike: ansi(9, 29), code: ansi(36, 39) };
}

export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- ANSI escapes start with the ESC control character
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/**
 * Where the sandbox writes. The bot speaks whenever it likes (a job ends, a card is edited), so at
 * an interactive prompt a line is written above the prompt and the prompt is drawn again.
 */
export class Terminal {
  private prompt: Interface | undefined;
  private promptShown = false;

  constructor(
    private readonly output: Writable,
    readonly style: Style,
  ) {}

  /** From now on, output goes above this interactive prompt. */
  attach(prompt: Interface): void {
    this.prompt = prompt;
  }

  showPrompt(): void {
    if (!this.prompt) return;
    this.promptShown = true;
    this.prompt.prompt();
  }

  /** A line was entered: the prompt is gone until `showPrompt`. */
  promptTaken(): void {
    this.promptShown = false;
  }

  print(text: string): void {
    if (this.prompt && this.promptShown) {
      clearLine(this.output, 0);
      cursorTo(this.output, 0);
      this.output.write(`${text}\n`);
      this.prompt.prompt(true);
      return;
    }
    this.output.write(`${text}\n`);
  }
}
