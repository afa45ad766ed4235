import { afterEach, describe, expect, it, vi } from 'vitest';
import { interruptedStartText } from '../../src/jobs/jobAnswers.js';
import { JobStarts, startLeaseName } from '../../src/jobs/jobStarts.js';
import { startJob } from '../../src/jobs/startJob.js';
import { StoreTimeoutError } from '../../src/store/deadline.js';
import { type Lease, tryLease } from '../../src/store/lease.js';
import { type BotHarness, startBot } from '../support/botHarness.js';
import { mentionEvent } from '../support/slackRequests.js';
import { heldBy, heldStep, watchLeases } from '../support/leases.js';
import { dropNamespace, uniqueNamespace } from '../support/redis.js';
import { FAST_POLL, START_INPUT as INPUT, startedCards } from './followSupport.js';

const START_ID = 'command_start-1';
/** The start INPUT's run writes down before it asks Mintlify. */
const START_NOTE = {
  id: START_ID,
  channel: INPUT.channel,
  threadTs: null,
  requestedBy: INPUT.requestedBy,
  door: INPUT.door,
  prompt: INPUT.prompt,
  at: new Date().toISOString(),
};

let h: BotHarness;
afterEach(async () => h?.close());

const underWayElsewhere = `the start ${START_ID} is under way elsewhere`;
const cards = () => startedCards(h);

/**
 * While the start reads its agent budget (nothing outside Redis is asked before the create, so that
 * is the slow step), `meanwhile` runs: there the test takes the start's lease away.
 */
function whileReadingTheBudget(meanwhile: () => Promise<void>): void {
  const { ledger } = h.bot.context.jobs;
  const readBudget = ledger.current.bind(ledger);
  vi.spyOn(ledger, 'current').mockImplementationOnce(async (projectId) => {
    await meanwhile();
    return readBudget(projectId);
  });
}

/**
 * Mintlify is slow to answer the start's create (held until `create.release()`); meanwhile its lease
 * lapses and another run (`other`) takes it. `starting` is the start under way.
 */
async function loseTheLeaseWhileCreating() {
  const leases = watchLeases(h.bot.store, h.logs);
  const create = heldStep();
  h.mintlify.injectFault('createJob', { until: create.until });
  const starting = startJob(h.bot.context.jobs, INPUT, START_ID);
  await vi.waitFor(() => expect(h.mintlify.requestsFor('createJob')).toHaveLength(1), {
    timeout: 10_000,
    interval: 20,
  });
  const other = await leases.loseToAnother(startLeaseName(START_ID));
  return { starting, create, other };
}

describe('a start whose lease is lost', () => {
  it('before Mintlify is asked: it does not ask, and its run again starts the job', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    const leases = watchLeases(h.bot.store, h.logs);
    let other: Lease | undefined;
    whileReadingTheBudget(async () => {
      other = await leases.loseToAnother(startLeaseName(START_ID));
    });

    await expect(startJob(jobs, INPUT, START_ID)).rejects.toThrow(underWayElsewhere);
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);

    // The queue runs the request again once the other run is done: Mintlify was never asked, so
    // this run asks, once, rather than tell the person the start was cut short.
    await other?.release();
    const outcome = await startJob(jobs, INPUT, START_ID);
    expect(outcome).toMatchObject({ kind: 'started', record: { startId: START_ID } });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });

  it('to a run of the same start that asked first: it gives way, without a word to the person', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    const leases = watchLeases(h.bot.store, h.logs);
    let other: Lease | undefined;
    // The lease lapses during a stall and the other run takes it and claims the ask before this
    // run's renewal could tell it: its own claim, which checks the lease, shows it.
    whileReadingTheBudget(async () => {
      other = await leases.takeOver(startLeaseName(START_ID), 60_000);
      expect(await jobs.starts.claimAsk(START_ID, heldBy(other))).toBe(true);
    });

    await expect(startJob(jobs, INPUT, START_ID)).rejects.toThrow(underWayElsewhere);
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
    expect((await jobs.starts.get(START_ID))?.refusal).toBeUndefined();
    await other?.release();
  });

  it('right before its claim, unseen by any renewal: the claim finds it, asks nothing, and the run again does', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    const leases = watchLeases(h.bot.store, h.logs);
    let other: Lease | undefined;
    // A stall between the last check of the lease and the claim: the lease lapses and another run
    // takes it, and no renewal of this run's comes in between to tell it.
    const claimAsk = jobs.starts.claimAsk.bind(jobs.starts);
    vi.spyOn(jobs.starts, 'claimAsk').mockImplementationOnce(async (...args) => {
      other = await leases.takeOver(startLeaseName(START_ID), 60_000);
      return claimAsk(...args);
    });

    await expect(startJob(jobs, INPUT, START_ID)).rejects.toThrow(underWayElsewhere);
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
    expect((await jobs.starts.get(START_ID))?.refusal).toBeUndefined();

    await other?.release();
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({ kind: 'started' });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });

  it('after the job is recorded: the follower posts its card, once, and the run again answers from it', async () => {
    h = await startBot({ env: FAST_POLL });
    const { jobs } = h.bot.context;
    const { starting, create, other } = await loseTheLeaseWhileCreating();
    create.release();

    await expect(starting).rejects.toThrow(underWayElsewhere);
    const [jobId] = [...h.mintlify.jobs.keys()];
    expect((await jobs.records.get(String(jobId)))?.pendingCard).toBeDefined();
    expect(cards()).toEqual([]);

    // Once the other run is done, the follower finds the card pending and posts it.
    await other.release();
    await vi.waitFor(() => expect(cards()).toHaveLength(1), { timeout: 10_000 });
    await vi.waitFor(async () => expect((await jobs.records.get(String(jobId)))?.cardTs).toBeTruthy(), {
      timeout: 10_000,
      interval: 20,
    });
    const outcome = await startJob(jobs, INPUT, START_ID);
    expect(outcome).toMatchObject({ kind: 'started', record: { jobId, cardTs: cards()[0]?.response.ts } });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });
});

describe('a start whose run died after recording its job, before its first check was queued', () => {
  it('has the check queued by its run again, and the follower posts the card', async () => {
    h = await startBot({ env: FAST_POLL });
    const { jobs } = h.bot.context;
    vi.spyOn(jobs, 'onJobActive').mockImplementationOnce(() => {}); // the check that never got queued
    const { starting, create, other } = await loseTheLeaseWhileCreating();
    create.release();
    await expect(starting).rejects.toThrow(underWayElsewhere);
    await other.release();
    expect(await h.bot.following()).toBe(0);

    const outcome = await startJob(jobs, INPUT, START_ID);
    expect(outcome).toMatchObject({ kind: 'unposted', reason: 'later' });
    await vi.waitFor(() => expect(cards()).toHaveLength(1), { timeout: 10_000 });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });
});

describe('a start whose claimant lost its lease, then made the job after all', () => {
  it('is answered from the job by its later runs, not with the run that took over saying it was cut short', async () => {
    h = await startBot({ env: FAST_POLL });
    const { jobs } = h.bot.context;
    const { starting, create, other } = await loseTheLeaseWhileCreating();
    await other.release();
    // That run finds the request claimed: Mintlify may have been asked, so it says the start was cut short.
    const interrupted = { kind: 'failed', text: interruptedStartText(INPUT.prompt) };
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject(interrupted);

    create.release();
    await expect(starting).rejects.toThrow(underWayElsewhere);
    await vi.waitFor(() => expect(cards()).toHaveLength(1), { timeout: 10_000 });
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({ kind: 'started' });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
  });
});

describe('a start Mintlify refused, run again (its process died before the door acted on the answer)', () => {
  it.each([
    ['a 400: nothing was made, so asking again starts no second job', 400, true],
    ['a 503: Mintlify may have made the job', 503, undefined],
  ] as const)(
    'answers as the first run did, saying whether Mintlify made nothing: %s',
    async (_, status, madeNothing) => {
      h = await startBot();
      const { jobs } = h.bot.context;
      h.mintlify.injectFault('createJob', { status }, 10);
      const first = await startJob(jobs, INPUT, START_ID);
      expect(first).toMatchObject({ kind: 'failed' });
      expect(first.kind === 'failed' && first.madeNothing).toBe(madeNothing ?? undefined);
      const again = await startJob(jobs, INPUT, START_ID);
      expect(again).toEqual({
        kind: 'failed',
        text: first.kind === 'failed' ? first.text : '',
        error: undefined,
        ...(madeNothing ? { madeNothing } : {}),
      });
      expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    },
  );
});

describe('a start run again after a run that asked Mintlify and died before its answer', () => {
  const begun = START_NOTE;
  const expectInterrupted = async () => {
    const { jobs } = h.bot.context;
    const text = interruptedStartText(INPUT.prompt);
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({ kind: 'failed', text });
    // Its runs again answer the same.
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({ kind: 'failed', text });
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
  };

  it('does not ask again, and tells the person it was interrupted', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    await jobs.starts.begin({ ...begun, claimsAsk: true });
    const dead = await tryLease(h.bot.store.atomic, startLeaseName(START_ID), 60_000);
    if (!dead) throw new Error('the start lease is held');
    expect(await jobs.starts.claimAsk(START_ID, heldBy(dead))).toBe(true);
    await dead.release(); // as its lapse would
    await expectInterrupted();
  });

  it('written before starts claimed their request (a restart during an upgrade): the same', async () => {
    h = await startBot();
    await h.bot.context.jobs.starts.begin(begun);
    await expectInterrupted();
  });
});

describe('a start whose claim Redis took without answering', () => {
  /** The claim lands, but its answer does not come (`failure`): the start stops there, asking nothing. */
  const claimLandsUnanswered = async (failure: Error = new StoreTimeoutError('a claim', 5_000)) => {
    const { atomic } = h.bot.store;
    const claim = atomic.claimWhileHeld.bind(atomic);
    vi.spyOn(atomic, 'claimWhileHeld').mockImplementationOnce(async (...args) => {
      await claim(...args);
      throw failure;
    });
    await expect(startJob(h.bot.context.jobs, INPUT, START_ID)).rejects.toThrow(failure);
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
  };

  it('asks Mintlify once, when its run again here has withdrawn the claim', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    await claimLandsUnanswered();
    // The request runs again once Redis answers.
    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({ kind: 'started' });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });

  it('asks Mintlify once, when run again in another process after this one withdrew the claim', async () => {
    h = await startBot();
    const withdrawals = vi.spyOn(h.bot.store.atomic, 'deleteIfValue');
    // The connection dropped while the claim was in flight (node-redis fails it with a plain error).
    await claimLandsUnanswered(new Error('Socket closed unexpectedly'));
    // Once Redis answers, this process withdraws its claim in the background.
    const askKey = `start-ask:${START_ID}`;
    await vi.waitFor(() => expect(withdrawals.mock.calls.map(([key]) => key)).toContain(askKey), {
      timeout: 10_000,
    });
    const withdrawn = withdrawals.mock.calls.findIndex(([key]) => key === askKey);
    expect(await withdrawals.mock.results[withdrawn]?.value).toBe(true);

    const elsewhere = { ...h.bot.context.jobs, starts: new JobStarts(h.bot.store) };
    expect(await startJob(elsewhere, INPUT, START_ID)).toMatchObject({ kind: 'started' });
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });
});

describe('a start whose claim Redis took without answering, as its process stops', () => {
  it('asks Mintlify once, when run again after the restart: the stopping process withdrew the claim', async () => {
    const namespace = uniqueNamespace('bot');
    h = await startBot({ namespace });
    const { atomic } = h.bot.store;
    const claim = atomic.claimWhileHeld.bind(atomic);
    vi.spyOn(atomic, 'claimWhileHeld').mockImplementationOnce(async (...args) => {
      await claim(...args);
      throw new StoreTimeoutError('a claim', 5_000);
    });
    await expect(startJob(h.bot.context.jobs, INPUT, START_ID)).rejects.toThrow(StoreTimeoutError);
    // Stopped at once: before the background withdrawal's first try.
    await h.bot.stop();

    const restarted = await startBot({ namespace });
    try {
      const outcome = await startJob(restarted.bot.context.jobs, INPUT, START_ID);
      expect(outcome).toMatchObject({ kind: 'started' });
      expect(restarted.mintlify.requestsFor('createJob')).toHaveLength(1);
      expect(startedCards(restarted)).toHaveLength(1);
    } finally {
      await restarted.close();
      await dropNamespace(`${namespace}:`);
    }
  });
});

describe('a start whose other run holds it for over 10 minutes', () => {
  it('stops giving way, and tells the person it was interrupted, asking Mintlify nothing', async () => {
    h = await startBot();
    const { jobs } = h.bot.context;
    const begunAt = new Date(Date.now() - 11 * 60_000).toISOString();
    await jobs.starts.begin({ ...START_NOTE, at: begunAt, claimsAsk: true });
    const other = await tryLease(h.bot.store.atomic, startLeaseName(START_ID), 60_000);

    expect(await startJob(jobs, INPUT, START_ID)).toMatchObject({
      kind: 'failed',
      text: interruptedStartText(INPUT.prompt),
    });
    expect(h.mintlify.requestsFor('createJob')).toEqual([]);
    await other?.release();
  });
});

describe('a command whose start loses its lease before Mintlify is asked', () => {
  it('is answered once, by its run again, which starts the job', async () => {
    h = await startBot();
    const leases = watchLeases(h.bot.store, h.logs);
    whileReadingTheBudget(async () => {
      const other = await leases.loseToAnother(String(leases.lastTaken('start:')));
      await other.release();
    });

    await h.command(INPUT.prompt, { user_id: INPUT.requestedBy, channel_id: INPUT.channel });
    await vi.waitFor(() => expect(cards()).toHaveLength(1), { timeout: 15_000 });
    await h.bot.drained();
    // The run that gave way said nothing, and neither did the run again: the card says it all.
    expect(h.slack.callsTo('response_url')).toEqual([]);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(h.logs.some((line) => line.includes('a start is under way in another run of it'))).toBe(true);
  });
});

describe('a mention in a thread whose start loses its lease once its job is recorded', () => {
  it('is answered from the start by its run again, never sent to the job as a follow-up', async () => {
    h = await startBot({ env: FAST_POLL });
    const leases = watchLeases(h.bot.store, h.logs);
    const root = h.slack.seedMessage(INPUT.channel, { user: 'U0BEA', text: 'Is the flag documented?' });
    const asked = h.slack.seedMessage(INPUT.channel, {
      user: INPUT.requestedBy,
      thread_ts: root.ts,
      text: `<@U0BOT> ${INPUT.prompt}`,
    });
    // Mintlify is slow to answer the create; meanwhile the lease lapses and another run takes it.
    const create = heldStep();
    h.mintlify.injectFault('createJob', { until: create.until });
    await h.event(
      mentionEvent({
        channel: INPUT.channel,
        user: INPUT.requestedBy,
        text: asked.text,
        ts: asked.ts,
        thread_ts: root.ts,
      }),
    );
    await vi.waitFor(() => expect(h.mintlify.requestsFor('createJob')).toHaveLength(1), {
      timeout: 10_000,
      interval: 20,
    });
    const other = await leases.loseToAnother(String(leases.lastTaken('start:')));
    await other.release();
    create.release();

    // The follower posts the card in the thread, which so becomes the job's, before the run again.
    await vi.waitFor(() => expect(cards()).toHaveLength(1), { timeout: 15_000 });
    await h.bot.drained(15_000);
    expect(h.logs.some((line) => line.includes('a start is under way in another run of it'))).toBe(true);
    expect(h.mintlify.requestsFor('sendMessage')).toEqual([]);
    expect(h.mintlify.requestsFor('createJob')).toHaveLength(1);
    expect(cards()).toHaveLength(1);
  });
});
