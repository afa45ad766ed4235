/**
 * Starts the Mintlify fake and a client pointed at it, and stops both after the test.
 * Retries wait through a recorded, instant `sleep`, so retry tests never wait real seconds.
 */
import { createServer } from 'node:net';
import { expect, onTestFinished } from 'vitest';
import { MintlifyClient, type MintlifyClientOptions } from '../../src/mintlify/index.js';
import { type MintlifyFake, type MintlifyFakeOptions, startMintlifyFake } from '../fakes/mintlifyFake.js';

export const API_KEY = 'mint_test_4f9c2e7a1b8d6035';
export const PROJECT_ID = 'proj-docs';
export const USER_AGENT = 'docs-agent-test/0.0.0';

/** Runs `cleanup` when the running test ends (a test file's hook here would bind to the first file only). */
export function onCleanup(cleanup: () => Promise<void>): void {
  onTestFinished(cleanup);
}

export function newClient(baseUrl: string, options: Partial<MintlifyClientOptions> = {}) {
  const sleeps: number[] = [];
  const client = new MintlifyClient({
    apiKey: API_KEY,
    baseUrl,
    userAgent: USER_AGENT,
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 30_000, maxElapsedMs: 60_000 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  onCleanup(() => client.close());
  return { client, sleeps };
}

export async function startFake(options: Partial<MintlifyFakeOptions> = {}): Promise<MintlifyFake> {
  const fake = await startMintlifyFake({ apiKey: API_KEY, projectId: PROJECT_ID, ...options });
  onCleanup(() => fake.close());
  return fake;
}

export async function fakeAndClient(
  clientOptions: Partial<MintlifyClientOptions> = {},
  fakeOptions: Partial<MintlifyFakeOptions> = {},
) {
  const fake = await startFake(fakeOptions);
  return { fake, ...newClient(fake.url, clientOptions) };
}

/** Awaits the rejection and returns the error, so a test can look at all of it. */
export async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

/** A loopback port nobody listens on (until a test decides to). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
