import { afterEach, expect, it, onTestFinished, vi } from 'vitest';
import { createLogger } from '../src/log.js';
import { openMemoryQueues } from '../src/queue/memoryQueues.js';
import { openMemoryStore } from '../src/store/store.js';
import { announceApp, watchForWorkers } from '../src/workerPresence.js';
import { type BotHarness, startBot } from './support/botHarness.js';
import { recordingLogger } from './support/loggers.js';
import { uniqueNamespace } from './support/redis.js';

const harnesses: BotHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

const NO_WORKER = 'no process with the worker role has run on this Redis and STORE_NAMESPACE lately';

it('a web process alone says plainly, once, that no worker runs while requests wait, and when one does again', async () => {
  const namespace = uniqueNamespace('presence');
  const web = await startBot({ namespace, env: { SERVICES: 'web' }, workerWatchMs: 100 });
  harnesses.push(web);
  await web.command('Document the queue');
  await web.command('Document the other queue');
  await expect.poll(() => web.logs.filter((line) => line.includes(NO_WORKER))).toHaveLength(1);
  expect(web.logs.find((line) => line.includes(NO_WORKER))).toContain('Run a process with SERVICES=worker');
  expect(web.logs.find((line) => line.includes(NO_WORKER))).toMatch(/ERROR/); // nobody is answered meanwhile

  // A worker on the same Redis and namespace: it takes the requests up, and the web process says so.
  const worker = await startBot({
    namespace,
    slack: web.slack,
    mintlify: web.mintlify,
    env: { SERVICES: 'worker' },
  });
  harnesses.push(worker);
  await expect
    .poll(() =>
      web.logs.some((line) => line.includes('a process with the worker role runs on this Redis again')),
    )
    .toBe(true);
  await expect.poll(() => web.mintlify.requestsFor('createJob').length).toBe(2);
  expect(web.logs.filter((line) => line.includes(NO_WORKER))).toHaveLength(1);
});

it('with two web processes and no worker, one of them says so, and says when one runs again', async () => {
  const namespace = uniqueNamespace('presence');
  const webs = [await startBot({ namespace, env: { SERVICES: 'web' }, workerWatchMs: 50 })];
  harnesses.push(webs[0]!);
  const { slack, mintlify } = webs[0]!;
  webs.push(await startBot({ namespace, slack, mintlify, env: { SERVICES: 'web' }, workerWatchMs: 50 }));
  harnesses.push(webs[1]!);
  await webs[0]!.command('Document the queue');
  const lines = (text: string) => webs.flatMap((web) => web.logs).filter((line) => line.includes(text));
  await expect.poll(() => lines(NO_WORKER)).toHaveLength(1);

  // Both keep looking (every 50 ms) while a worker starts: nobody says it again.
  const worker = await startBot({ namespace, slack, mintlify, env: { SERVICES: 'worker' } });
  harnesses.push(worker);
  await expect.poll(() => mintlify.requestsFor('createJob').length).toBe(1);
  await expect.poll(() => lines('a process with the worker role runs on this Redis again')).toHaveLength(1);
  expect(lines(NO_WORKER)).toHaveLength(1);
});

it('when the web process that said it stops, another one says it while no worker runs', async () => {
  const namespace = uniqueNamespace('presence');
  const first = await startBot({ namespace, env: { SERVICES: 'web' }, workerWatchMs: 50 });
  harnesses.push(first);
  const { slack, mintlify } = first;
  const second = await startBot({ namespace, slack, mintlify, env: { SERVICES: 'web' }, workerWatchMs: 50 });
  harnesses.push(second);
  await first.command('Document the queue');
  const said = () => [first, second].filter((web) => web.logs.some((line) => line.includes(NO_WORKER)));
  await expect.poll(() => said()).toHaveLength(1);
  const [speaker] = said();
  const other = speaker === first ? second : first;

  await speaker!.stopBot(); // a deploy replaces it
  await expect.poll(() => other.logs.filter((line) => line.includes(NO_WORKER))).toHaveLength(1);
});

it('a web process alone says nothing while no request waits (a worker still starting), and says it once one does', async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', secrets: [], sink: (line) => lines.push(line) });
  const store = openMemoryStore(uniqueNamespace('presence'));
  const queues = openMemoryQueues({ logger });
  const requests = queues.queue<string>('requests');
  const looks = vi.spyOn(requests, 'counts');
  const watch = watchForWorkers(store, requests, logger, 20);
  onTestFinished(async () => {
    await watch.stop();
    await queues.close(0);
    await store.close();
  });

  await expect.poll(() => looks.mock.calls.length).toBeGreaterThanOrEqual(3);
  expect(lines.filter((line) => line.includes(NO_WORKER))).toEqual([]);

  await requests.add('command', 'Document the queue');
  await expect.poll(() => lines.filter((line) => line.includes(NO_WORKER))).toHaveLength(1);
  expect(lines.find((line) => line.includes(NO_WORKER))).toContain('1 Slack request(s) wait in the queue');
});

it('a process finds another Slack app’s deployment running on its Redis and STORE_NAMESPACE, and says so once', async () => {
  const store = openMemoryStore(uniqueNamespace('presence'));
  onTestFinished(() => store.close());
  const production = recordingLogger();
  const staging = recordingLogger();
  const first = announceApp(store, { botId: 'B0PROD', appId: 'A0PROD' }, 'docs-agent', production.logger);
  onTestFinished(() => first.stop());
  const second = announceApp(store, { botId: 'B0STAGE', appId: 'A0STAGE' }, 'docs-agent', staging.logger);
  onTestFinished(() => second.stop());
  await expect
    .poll(() => staging.lines)
    .toEqual([
      expect.stringMatching(
        /^error another Slack app's deployment \(bot B0PROD, app A0PROD\) runs on this Redis with the same STORE_NAMESPACE \(docs-agent\)/,
      ),
    ]);
});

it('a process names a deployment of the same Slack app for another workspace as such', async () => {
  const store = openMemoryStore(uniqueNamespace('presence'));
  onTestFinished(() => store.close());
  const first = announceApp(
    store,
    { botId: 'B0ACME', appId: 'A0DOCS' },
    'docs-agent',
    recordingLogger().logger,
  );
  onTestFinished(() => first.stop());
  const second = recordingLogger();
  const other = announceApp(store, { botId: 'B0GLOBEX', appId: 'A0DOCS' }, 'docs-agent', second.logger);
  onTestFinished(() => other.stop());
  await expect
    .poll(() => second.lines)
    .toEqual([
      expect.stringMatching(
        /^error a deployment of this Slack app for another workspace \(bot B0ACME, app A0DOCS\) runs on this Redis with the same STORE_NAMESPACE \(docs-agent\)/,
      ),
    ]);
});
