import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runSandbox } from '../../sandbox/runSandbox.js';

/** Runs the sandbox in this process on a piped script, as `printf ... | npm run sandbox` does; resolves with what it printed. */
async function runScript(lines: string[], jobSeconds = 0.2, previews = false): Promise<string> {
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
  });
  // Previews add card edits at moments of their own: only the test of previews has them.
  await runSandbox({
    input: Readable.from([lines.map((line) => `${line}\n`).join('')]),
    output,
    jobSeconds,
    previews,
  });
  return printed;
}

/** Fails unless each of `texts` is printed, in this order. */
function expectInOrder(printed: string, texts: Array<string | RegExp>): void {
  let rest = printed;
  for (const text of texts) {
    const match = typeof text === 'string' ? literal(rest, text) : text.exec(rest);
    if (!match) expect.fail(`expected ${String(text)} next in what the sandbox printed:\n${printed}`);
    rest = rest.slice(match.index + match[0].length);
  }
}

function literal(text: string, wanted: string): { index: number; 0: string } | null {
  const index = text.indexOf(wanted);
  return index === -1 ? null : { index, 0: wanted };
}

const PR = 'https://github.com/acme/docs/pull/101';
const DONE =
  /↳ #1 @docs-agent: @ada ✅ The docs agent is done: .*https:\/\/github\.com\/acme\/docs\/pull\/101.* is ready for review/;
/** A later round's end: said in words of its own. */
const DONE_AGAIN =
  /↳ #1 @docs-agent: @ada ✅ The docs agent is done with the latest replies: .*https:\/\/github\.com\/acme\/docs\/pull\/101.* is ready for review/;

describe('npm run sandbox', () => {
  it('fixes what readers struggled with from the digest: the form filled in, the card in the channel linking the digest', async () => {
    const printed = await runScript(['/docs-agent digest', 'fix 1 2', 'wait-for ready for review']);
    expectInOrder(printed, [
      'Where readers struggled',
      '👎 9 thumbs down  ·  /cli/deploy',
      // The item's button, which `fix 1 2` presses.
      '[Fix with the docs agent]',
      'A reader: “Which flag skips the build?”',
      '› fix 1 2',
      '(modal) Send to docs agent',
      '[Improve the page "/cli/deploy": readers gave it 9 thumbs down',
      'Page /cli/deploy: 9 thumbs down',
      '(modal) you keep the instruction as filled in and choose Start job',
      '#2 @docs-agent in #docs\n  Docs agent job for @ada, from the docs digest (https://acme.slack.com/archives/C0DOCS/p',
      '✎ #1 edited by @docs-agent:\n  🛠 ada started a job for this',
      '✎ #2 edited by @docs-agent:\n  ✅ Pull request ready',
    ]);
  });

  it('finds at once with wait-for what the bot showed during the command before', async () => {
    // The job ends during `wait 1`; the wait-for after it does not wait its 60 s for it again.
    const printed = await runScript([
      '/docs-agent Document the --dry-run flag',
      'wait 1',
      'wait-for ready for review',
    ]);
    expect(printed).toContain('Pull request ready');
    expect(printed).not.toContain('(nothing with');
  });

  it('uses up what a wait-for found: two waits for the same words wait for two jobs', async () => {
    const printed = await runScript(
      [
        '/docs-agent Document A',
        'wait 0.5',
        '/docs-agent Document B',
        'wait-for ready for review',
        'wait-for ready for review',
        '/docs-agent status',
      ],
      1,
    );
    const status = printed.slice(printed.lastIndexOf('› /docs-agent status'));
    expect(status).toContain('Document B');
    expect(status).not.toContain('Working on it');
  });

  it('deploys a preview of the pull request, a few seconds after it is ready', async () => {
    const printed = await runScript(
      ['/docs-agent Document the --dry-run flag', 'wait-for ready for review', 'wait-for is deployed'],
      0.2,
      true,
    );
    expectInOrder(printed, [
      'Deploying a preview of mintlify/job-1…',
      '[Preview → https://acme-mintlify-job-1.mintlify.app]',
      '↳ #1 @docs-agent: 👀 The preview of this change is deployed',
    ]);
  });

  it('tells a whole story: a job’s card, steering it in its thread, its pull request, then the digest', async () => {
    const printed = await runScript([
      '/docs-agent Document the --dry-run flag',
      'wait-for ready for review',
      'reply Also add an example',
      'wait-for ready for review',
      'wait 0.1',
      '/docs-agent digest',
      'quit',
    ]);

    expectInOrder(printed, [
      '› /docs-agent Document the --dry-run flag',
      '(only you) @docs-agent: ⏳ Starting a docs agent job: its card will appear here.',
      [
        '#1 @docs-agent in #docs',
        '  Docs agent job for @ada',
        '  │ Document the --dry-run flag',
        '  ⏳ Working on it  ·  started just now',
      ].join('\n'),
      'Reply in this thread to steer the job.',
      // The follower edits the card, then tells the thread, with the pull request.
      '✎ #1 edited by @docs-agent:\n  ✅ Pull request ready',
      `  [Open pull request → ${PR}]`,
      DONE,
      // Your reply goes into the thread, the bot marks it delivered, and the job's next round ends
      // the same way. (Whether the card shows it working again depends on when the follower looks.)
      '› reply Also add an example',
      '  ↳ #1 @ada: Also add an example',
      '  ↳ #1 @docs-agent reacted ✅ to your reply',
      DONE_AGAIN,
      '› /docs-agent digest',
      '(only you) @docs-agent: ⏳ Gathering the docs digest of the last 7 days for this channel…',
      /#2 @docs-agent in #docs\n {2}Docs digest: .+ \(UTC\)/,
      /Human visitors {2}[\d,]+ {2}↑ \d+% from last week/,
      'Top 10 pages by unique visitors',
      /1\. \/quickstart\n {2}█+░* \d+% {2}· {2}[\d,]+ \([\d,]+ human, [\d,]+ AI\)/,
      /\d{3} pages had visits/,
      '› quit',
    ]);
    // Piped: no ANSI styles, and the bot's info lines stay out of the way (LOG_LEVEL warn).
    expect(printed).not.toContain('\x1b[');
    expect(printed).not.toContain('· info:');
    // Same pull request across both rounds.
    expect(printed).not.toContain('/pull/102');
  });

  it('fails a job whose instruction says so, answers what it cannot do, and at the end of the input lets running jobs finish', async () => {
    const printed = await runScript([
      'reply Anything new?',
      '/docs-agent Please fail on purpose',
      'reply 7 hello',
      'reply',
      'shortcut 7 Document this',
      'shortcut Document this',
      'dm',
      '@bob hello',
      'frobnicate',
      'wait 601',
      '/docs-agent status',
    ]);

    expectInOrder(printed, [
      'There is no job thread yet: start a job with /docs-agent',
      '#1 @docs-agent in #docs',
      'There is no message #7.',
      'What should the reply say?',
      'There is no message #7.',
      'On which message? For example: shortcut 2',
      'What should the message say? For example: dm',
      'Only @docs-agent is a bot here.',
      '“frobnicate” is not something the sandbox knows. Type help for what you can do.',
      'How long? For example: wait 5 (seconds, up to 600)',
      '(only you) @docs-agent: Recent docs agent jobs in this channel (1)',
      'thread (#1)',
      '(end of input: letting the running jobs finish…)',
    ]);
    // The job's end comes whenever its 0.2 s are up: on a busy machine, before the input has ended.
    expectInOrder(printed, [
      '#1 @docs-agent in #docs',
      '✎ #1 edited by @docs-agent:\n  ❌ Failed',
      '↳ #1 @docs-agent: @ada ❌ The docs agent job failed.',
    ]);
  });

  it('goes through each door: a mention, the message shortcut, a DM, and the Home tab listing the jobs', async () => {
    // In the DM (#4) the news mentions nobody: it is for the person anyway.
    const done = (n: string, pr: number, again = false) =>
      new RegExp(
        `↳ ${n} @docs-agent: ${n === '#4' ? '' : '@ada '}✅ The docs agent is done${again ? ' with the latest replies' : ''}: .*/pull/${pr}\\).* is ready for review`,
      );
    const printed = await runScript([
      // A mention at the top of #docs: your message, and the card as the reply under it.
      'say Does the CLI retry failed uploads?',
      'reply 1 Yes, 3 times, with backoff',
      '@docs-agent Document the --dry-run flag',
      'wait-for ready for review',
      // A mention in the job's thread is a follow-up (Slack delivers it twice; it counts once).
      'reply 2 @docs-agent Also add an example',
      'wait-for ready for review',
      // A mention in a thread that is no job's starts a job there (its "failed" is context, not the instruction).
      'reply 1 @docs-agent document the retry behaviour',
      'wait-for ready for review',
      // The message shortcut on a message with a thread: the bot's form, submitted; the card in that thread.
      'say Export now writes CSV by default',
      'reply 3 and JSON with --json',
      'shortcut 3 Document the CSV default and the --json flag --thread',
      'wait-for ready for review',
      // A DM: its own conversation, the card under your message, and a reply there steers the job.
      'dm Document the --json flag',
      'wait-for ready for review',
      'reply 4 Also the CSV one',
      'wait-for ready for review',
      'home',
      'quit',
    ]);

    expectInOrder(printed, [
      '› say Does the CLI retry failed uploads?',
      '#1 @ada in #docs\n  Does the CLI retry failed uploads?',
      '  ↳ #1 @ada: Yes, 3 times, with backoff',
      '› @docs-agent Document the --dry-run flag',
      '#2 @ada in #docs\n  @docs-agent Document the --dry-run flag',
      '  ↳ #2 @docs-agent: Docs agent job for @ada\n      │ Document the --dry-run flag',
      '✎ ↳ #2 edited by @docs-agent:\n  ✅ Pull request ready',
      done('#2', 101),
      '  ↳ #2 @ada: @docs-agent Also add an example',
      '  ↳ #2 @docs-agent reacted ✅ to your reply',
      done('#2', 101, true),
      '  ↳ #1 @ada: @docs-agent document the retry behaviour',
      '  ↳ #1 @docs-agent: Docs agent job for @ada\n      │ document the retry behaviour',
      done('#1', 102),
      '#3 @ada in #docs\n  Export now writes CSV by default',
      [
        '› shortcut 3 Document the CSV default and the --json flag --thread',
        '(modal) Send to docs agent',
        '    What should the agent change in the docs?',
      ].join('\n'),
      '    The message from @ada\n    │ Export now writes CSV by default',
      // The form's optional input says so, as Slack shows it.
      '    Context (optional)\n    ☐ Include the whole thread',
      '    [Cancel] [Start job]',
      '(modal) you write “Document the CSV default and the --json flag”, tick “Include the whole thread” and choose Start job',
      '  ↳ #3 @docs-agent: Docs agent job for @ada\n      │ Document the CSV default and the --json flag',
      done('#3', 103),
      '#4 @ada in DM with @docs-agent\n  Document the --json flag',
      '  ↳ #4 @docs-agent: Docs agent job for @ada\n      │ Document the --json flag',
      done('#4', 104),
      '  ↳ #4 @ada: Also the CSV one',
      '  ↳ #4 @docs-agent reacted ✅ to your reply',
      done('#4', 104, true),
      '› home',
      '@docs-agent’s Home tab, as @ada sees it\n  Docs agent\n  Your recent jobs',
      // Newest first, each with its thread, read as the number of the message it is under.
      /✅ Pull request ready {2}“Document the --json flag”\n {2}started just now {2}· {2}thread \(#4\)/,
      /Document the CSV default and the --json flag”\n.*thread \(#3\)/,
      /document the retry behaviour”\n.*thread \(#1\)/,
      /Document the --dry-run flag”\n.*thread \(#2\)/,
      /\d+ of 100 agent uses/,
      '› quit',
    ]);
    expect(printed).not.toContain('❌');
    // Each reply was delivered once, although a mention in a thread reaches the bot twice.
    expect(printed.match(/reacted ✅/g)).toHaveLength(2);
  });

  it('starts from the npm script with no configuration, reads piped input, and exits cleanly at its end', async () => {
    const child = spawn('npm', ['run', '--silent', 'sandbox', '--', '--job-seconds', '0.2'], {
      // Nothing but a PATH: the sandbox needs no Slack app, no Mintlify key, no Redis.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8');
    });
    child.stdin.end('/docs-agent Document the --dry-run flag\n');

    const [code] = (await once(child, 'exit')) as [number | null];
    expect(printed).toContain('docs-agent sandbox');
    expect(printed).toMatch(DONE);
    expect(code).toBe(0);
  });

  it('answers a mistyped option, or one npm passed on without --, with its usage, not a stack trace', async () => {
    // `npm run sandbox --job-seconds 2` (without --) hands the script a bare `2`; a typo or --help, an option it does not know.
    // The script as tsx runs it (node with tsx's loader), the three at once.
    const runs = [['--help'], ['--job-second', '2'], ['2']].map(async (args) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts', ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      child.stdin.end('quit\n');
      const [code] = (await once(child, 'exit')) as [number | null];
      return { args, printed, code };
    });
    for (const { args, printed, code } of await Promise.all(runs)) {
      expect(printed, args.join(' ')).toContain('--job-seconds');
      expect(printed, args.join(' ')).not.toMatch(/TypeError|ERR_PARSE_ARGS|at .*parse_args/);
      expect(code).toBe(args[0] === '--help' ? 0 : 2);
    }
  });

  it('keeps a reply that only calls people (@here, @channel) between people, as README says the bot does', async () => {
    // In Slack, @here and an autocompleted @cat reach the bot as <!here> and <@U…>: a call to people, not sent.
    const printed = await runScript([
      '/docs-agent Document the --dry-run flag',
      'wait-for ready for review',
      'reply @here',
      'reply @channel',
      'wait 1',
    ]);
    expect(printed).toMatch(DONE);
    expect(printed).not.toContain('reopened just now');
    expect(printed).not.toContain('reacted ✅ to your reply');
  });

  it('at the end of piped input lets every running job and its preview deployment finish, as README says', async () => {
    // Four jobs that end together: their previews wait their turn, one every 12 s, in the bot's limiter.
    const printed = await runScript(
      [
        '/docs-agent Document A',
        '/docs-agent Document B',
        '/docs-agent Document C',
        '/docs-agent Document D',
      ],
      0.2,
      true,
    );
    expect(printed).not.toContain('(stopping with work still running)');
    expect(printed.match(/The preview of this change is deployed/g)).toHaveLength(4);
  }, 120_000);
});
