import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type JobRecord, JobRecords } from '../../src/jobs/jobRecord.js';
import { createLogger } from '../../src/log.js';
import { openRedisStore } from '../../src/store/redisStore.js';
import { openMemoryStore, type Store } from '../../src/store/store.js';
import { TEST_REDIS_URL, uniqueNamespace } from '../support/redis.js';

const logger = createLogger({ level: 'error', secrets: [], sink: () => {} });
const opened: Store[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});

/**
 * Two writers on one namespace. Redis: two connections, as two bot processes would have. Memory:
 * one store shared by two JobRecords, as concurrent async callers in the one process it serves.
 */
const writers = {
  memory: async (namespace: string): Promise<[Store, Store]> => {
    const store = openMemoryStore(namespace);
    opened.push(store);
    return [store, store];
  },
  redis: async (namespace: string): Promise<[Store, Store]> => {
    const stores = await Promise.all(
      [1, 2].map(() => openRedisStore({ url: TEST_REDIS_URL, namespace, logger })),
    );
    opened.push(...stores);
    return [stores[0] as Store, stores[1] as Store];
  },
};

function aJob(jobId: string): JobRecord {
  const at = '2026-01-01T10:00:00.000Z';
  return {
    jobId,
    projectId: 'proj',
    channel: 'C1',
    threadTs: '1700000000.000100',
    cardTs: '1700000000.000100',
    requestedBy: 'U1',
    prompt: 'Document the new endpoint',
    door: 'command',
    status: 'active',
    prLink: null,
    repository: null,
    ref: null,
    model: null,
    createdAt: at,
    updatedAt: at,
    finishedAt: null,
    round: 0,
    announced: [],
  };
}

describe.each(Object.entries(writers))('job record updates on the %s store', (_kind, open) => {
  it('loses none of many concurrent updates from two writers', async () => {
    const [one, two] = await open(uniqueNamespace('record-race'));
    const [first, second] = [new JobRecords(one), new JobRecords(two)];
    await first.save(aJob('job-1'));

    const keys = Array.from({ length: 40 }, (_, i) => `0:note-${i}`);
    await Promise.all(
      keys.map((key, i) =>
        (i % 2 === 0 ? first : second).update('job-1', (current) => ({
          ...current,
          announced: [...current.announced, key],
        })),
      ),
    );

    const stored = await second.get('job-1');
    expect([...(stored?.announced ?? [])].sort()).toEqual([...keys].sort());
  });

  it('keeps both a final status and a reopened round written at the same time', async () => {
    const [one, two] = await open(uniqueNamespace('record-race'));
    const [follower, thread] = [new JobRecords(one), new JobRecords(two)];
    const jobIds = Array.from({ length: 10 }, (_, i) => `job-${i}`);
    await Promise.all(jobIds.map((jobId) => follower.save(aJob(jobId))));

    await Promise.all(
      jobIds.flatMap((jobId) => [
        follower.update(jobId, (current) => ({
          ...current,
          status: 'completed',
          finishedAt: '2026-01-01T10:05:00.000Z',
        })),
        thread.update(jobId, (current) => ({ ...current, round: current.round + 1 })),
      ]),
    );

    for (const jobId of jobIds) {
      expect(await follower.get(jobId)).toMatchObject({ status: 'completed', round: 1 });
    }
    // The unfinished index follows the record's last state, whichever writer's index update ran last.
    expect(await thread.unfinishedIds()).toEqual([]);
  });

  it('keeps a job reopened while its end was being indexed on the unfinished list, so it is followed', async () => {
    const [one, two] = await open(uniqueNamespace('record-race'));
    const [follower, thread] = [new JobRecords(one), new JobRecords(two)];
    await follower.save(aJob('job-1'));
    // The follower's index update for the end lands last: after the reopened round's own.
    let land = () => {};
    const landed = new Promise<void>((resolve) => (land = resolve));
    const indexRemove = one.atomic.indexRemove.bind(one.atomic);
    const removes = vi.spyOn(one.atomic, 'indexRemove').mockImplementationOnce(async (key, member) => {
      await landed;
      await indexRemove(key, member);
    });
    onTestFinished(() => removes.mockRestore());

    const ending = follower.update('job-1', (current) => ({
      ...current,
      status: 'completed',
      finishedAt: '2026-01-01T10:05:00.000Z',
    }));
    await expect.poll(() => removes.mock.calls.length).toBe(1);
    await thread.update('job-1', (current) => ({
      ...current,
      status: 'active',
      finishedAt: null,
      round: current.round + 1,
    }));
    land();
    await ending;

    expect(await follower.get('job-1')).toMatchObject({ status: 'active', round: 1 });
    expect(await thread.unfinishedIds()).toEqual(['job-1']);
  });

  it('answers undefined, and writes nothing, for a job it does not know', async () => {
    const [one] = await open(uniqueNamespace('record-race'));
    const records = new JobRecords(one);
    expect(await records.update('job-missing', (current) => ({ ...current, round: 9 }))).toBeUndefined();
    expect(await records.get('job-missing')).toBeUndefined();
  });
});
