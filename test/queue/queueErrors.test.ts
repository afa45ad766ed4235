import { describe, expect, it } from 'vitest';
import { errorReporter } from '../../src/queue/bullmqErrors.js';
import { recordingLogger } from '../support/loggers.js';

/** Named as node-redis names a Redis error reply. */
class ErrorReply extends Error {}

describe('the queues’ errors in the log', () => {
  it('tells a full Redis in plain words, once per burst, whichever of BullMQ’s scripts it refused', () => {
    const { logger, lines } = recordingLogger();
    const report = errorReporter(logger);
    for (const script of ['3f2a9c', '8b1d07', '3f2a9c']) {
      report(
        'worker requests',
        new ErrorReply(
          `OOM command not allowed when used memory > 'maxmemory'. script: ${script}, on @user_script:1.`,
        ),
      );
    }
    expect(lines).toEqual([
      'error Queue error in worker requests: Redis is full (its maxmemory is reached, and it refuses writes)',
    ]);
  });

  it('tells each other error once per burst, in its own words', () => {
    const { logger, lines } = recordingLogger();
    const report = errorReporter(logger);
    for (const source of ['queue requests', 'worker requests', 'queue requests']) {
      report(source, new Error('Socket closed unexpectedly'));
    }
    report('worker follow', new Error('connect ECONNREFUSED 127.0.0.1:6379'));
    expect(lines).toEqual([
      'error Queue error in queue requests: Socket closed unexpectedly',
      'error Queue error in worker follow: connect ECONNREFUSED 127.0.0.1:6379',
    ]);
  });
});
