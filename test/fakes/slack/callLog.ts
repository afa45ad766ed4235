/** Every request the fake answered, and a way to await one without polling. */

export interface SlackCall {
  /** The Web API method ("chat.postMessage"), or "response_url" for a POST to a response URL. */
  method: string;
  /** The arguments as Slack parsed them: form values are strings; blocks, attachments, view are objects. */
  args: Record<string, unknown>;
  token?: string;
  /** Date.now() when the request arrived. */
  at: number;
  /** The HTTP status the fake answered (429, 500 only when a fault was injected). */
  status: number;
  /** The body the fake answered, e.g. `{ ok: false, error: 'invalid_blocks', ... }`. */
  response: Record<string, unknown>;
  /** For "response_url" calls: the id given to `responseUrl(id)`. */
  responseId?: string;
  /** The answer was a fault the test injected (`failNext`), not the fake's own judgement. */
  injected?: true;
}

export type CallPredicate = (call: SlackCall) => boolean;

export class CallLog {
  readonly calls: SlackCall[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly callListeners = new Set<(call: SlackCall) => void>();

  record(call: SlackCall): void {
    this.calls.push(call);
    for (const listener of [...this.listeners]) listener();
    for (const listener of [...this.callListeners]) listener(call);
  }

  /** Calls `listener` with each call from now on, as it arrives; returns a function that stops it. */
  onCall(listener: (call: SlackCall) => void): () => void {
    this.callListeners.add(listener);
    return () => this.callListeners.delete(listener);
  }

  callsTo(method: string): SlackCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Resolves with the first matching call, already recorded or still to come. */
  async waitForCall(method: string, predicate?: CallPredicate, timeoutMs = 10_000): Promise<SlackCall> {
    const [call] = await this.waitForCalls(method, 1, predicate, timeoutMs);
    if (!call) throw new Error(`waitForCall('${method}') resolved without a call`);
    return call;
  }

  /** Resolves with the first `count` matching calls once that many have been recorded. */
  waitForCalls(
    method: string,
    count: number,
    predicate?: CallPredicate,
    timeoutMs = 10_000,
  ): Promise<SlackCall[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const matches = this.callsTo(method).filter((call) => matchesSafely(predicate, call));
        if (matches.length < count) return;
        stop();
        resolve(matches.slice(0, count));
      };
      const timer = setTimeout(() => {
        stop();
        reject(
          new Error(
            `Slack fake: expected ${count} ${method} call(s) within ${timeoutMs} ms.\n${this.describe()}`,
          ),
        );
      }, timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  describe(): string {
    if (this.calls.length === 0) return 'No calls were made to the Slack fake.';
    return `Calls seen:\n${this.calls.map((call) => `  ${describeCall(call)}`).join('\n')}`;
  }
}

// A predicate that throws (an expect() inside it, say) simply does not match yet.
function matchesSafely(predicate: CallPredicate | undefined, call: SlackCall): boolean {
  try {
    return predicate ? predicate(call) : true;
  } catch {
    return false;
  }
}

function describeCall(call: SlackCall): string {
  const outcome = call.response.ok ? 'ok' : `${call.status} ${String(call.response.error)}`;
  const shown = ['channel', 'ts', 'thread_ts', 'user', 'text']
    .filter((key) => call.args[key] !== undefined)
    .map((key) => `${key}=${JSON.stringify(String(call.args[key]).slice(0, 60))}`);
  const id = call.responseId ? `[${call.responseId}]` : '';
  return `${call.method}${id} -> ${outcome}${shown.length > 0 ? ` (${shown.join(', ')})` : ''}`;
}
