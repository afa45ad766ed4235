import { afterEach, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../src/jobs/jobRecord.js';
import { startLeaseName } from '../../src/jobs/jobStarts.js';
import { recoverJobCard } from '../../src/jobs/recoverJobCard.js';
import { startJob } from '../../src/jobs/startJob.js';
import { type BotHarness, SECRETS, startBot } from '../support/botHarness.js';
import { heldStep, watchLeases } from '../support/leases.js';
import { START_INPUT as INPUT, startedCards } from './followSupport.js';

let h: BotHarness;
afterEach(async () => h?.close());

const landed = () => startedCards(h);

/**
 * A job started while Slack failed its card: recorded with the card pending. The follower checks
 * it only after a minute, so the test's own recoveries are the only ones.
 */
async function jobWithPendingCard(): Promise<JobRecord> {
  h = await startBot({ env: { POLL_INTERVAL_MS: '60000' } });
  h.slack.failNext('chat.postMessage', { error: 'internal_error' });
  const outcome = await startJob(h.bot.context.jobs, INPUT, 'command_card-1');
  expect(outcome).toMatchObject({ kind: 'unposted', reason: 'later' });
  if (outcome.kind !== 'unposted') throw new Error('the card was posted');
  expect(outcome.record.pendingCard).toBeDefined();
  return outcome.record;
}

const current = (record: JobRecord) => h.bot.context.jobs.records.get(record.jobId);

/**
 * Recovers the record's card while Slack is slow at one step (the fault already set): meanwhile its
 * lease lapses and another check takes it. The recovery gives way without a card, and the other
 * check then finishes without one too.
 */
async function recoverLosingTheLease(record: JobRecord, step: { release: () => void }): Promise<void> {
  const leases = watchLeases(h.bot.store, h.logs);
  const recovering = recoverJobCard(h.bot.context.jobs, record);
  await h.slack.waitForCall('conversations.history', (call) => call.args.channel === INPUT.channel);
  const other = await leases.loseToAnother(startLeaseName(String(record.startId)));
  step.release();

  expect(await recovering).toBe('busy');
  expect(landed()).toEqual([]);
  expect((await current(record))?.pendingCard).toBeDefined();
  await other.release();
}

async function expectCardPlaced(record: JobRecord): Promise<void> {
  expect(await current(record)).toMatchObject({ cardTs: landed()[0]?.response.ts });
  expect((await current(record))?.pendingCard).toBeUndefined();
}

describe('recovering a pending card whose lease is lost', () => {
  it('while it looks for the card: it does not post it, and the next recovery posts it once', async () => {
    const record = await jobWithPendingCard();
    // Slack is slow to show the channel's history.
    const read = heldStep();
    h.slack.failNext('conversations.history', { until: read.until });
    await recoverLosingTheLease(record, read);

    expect(await recoverJobCard(h.bot.context.jobs, record)).toBe('done');
    expect(landed().map((call) => call.args.channel)).toEqual([INPUT.channel]);
    await expectCardPlaced(record);
  });

  it('while the channel refuses the card: it does not move the job to the DM, and the next recovery does, once', async () => {
    const record = await jobWithPendingCard();
    // The channel refuses the card, slowly.
    const post = heldStep();
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel', until: post.until });
    await recoverLosingTheLease(record, post);

    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    expect(await recoverJobCard(h.bot.context.jobs, record)).toBe('done');
    expect(landed().map((call) => call.args.channel)).toEqual([INPUT.requestedBy]);
    await expectCardPlaced(record);
  });
});

describe('recovering a pending card', () => {
  it('does not take another job’s card in the channel for its own: it posts its own, once', async () => {
    const record = await jobWithPendingCard();
    // Meanwhile another job's card lands in the same channel.
    const other = await startJob(
      h.bot.context.jobs,
      { ...INPUT, prompt: 'Document another flag' },
      'command_card-2',
    );
    if (other.kind !== 'started') throw new Error('the other job’s card was not posted');

    expect(await recoverJobCard(h.bot.context.jobs, record)).toBe('done');
    const own = landed().filter(
      (call) => call.args.channel === INPUT.channel && call.response.ts !== other.record.cardTs,
    );
    expect(own).toHaveLength(1);
    expect(await current(record)).toMatchObject({ cardTs: own[0]?.response.ts });
    expect((await current(record))?.pendingCard).toBeUndefined();
    expect((await current(record))?.cardTs).not.toBe(other.record.cardTs);
  });
});

describe('recovering a pending card the channel refuses, while Slack is briefly busy', () => {
  it('still gets the card to the requester’s DM once Slack answers again', async () => {
    const record = await jobWithPendingCard();
    // The channel refuses the card for good; Slack says it cannot take the DM post for now.
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    h.slack.failNext('chat.postMessage', { error: 'service_unavailable' });
    await recoverJobCard(h.bot.context.jobs, record);
    expect(landed()).toEqual([]);

    // Slack answers again: the next recovery (the follower's next check) posts the card in the DM.
    await recoverJobCard(h.bot.context.jobs, (await current(record)) ?? record);
    expect(landed().map((call) => call.args.channel)).toEqual([INPUT.requestedBy]);
  });
  it('says beside the card in the DM, on the later try too, that the channel does not let the bot post: not to invite it', async () => {
    const record = await jobWithPendingCard();
    // An announcement-only channel refuses the card; Slack cannot take the DM post for now.
    h.slack.failNext('chat.postMessage', { error: 'restricted_action' });
    h.slack.failNext('chat.postMessage', { error: 'service_unavailable' });
    await recoverJobCard(h.bot.context.jobs, record);
    expect(landed()).toEqual([]);

    await recoverJobCard(h.bot.context.jobs, (await current(record)) ?? record);
    expect(landed().map((call) => call.args.channel)).toEqual([INPUT.requestedBy]);
    const note = await h.slack.waitForCall('chat.postMessage', (call) =>
      String(call.args.text).includes('so I’m following the job here'),
    );
    expect(String(note.args.text)).toMatch(/^Slack doesn’t let me post in <#/);
    expect(String(note.args.text)).not.toContain('/invite');
  });
});

describe('recovering a pending card the channel refuses, when Slack may have taken the DM post but answered an error', () => {
  it('does not post a second card in the DM: the job is followed, as its Home tab shows', async () => {
    const record = await jobWithPendingCard();
    h.slack.failNext('chat.postMessage', { error: 'not_in_channel' });
    // Slack's fatal_error: "some aspect of the operation may have succeeded".
    h.slack.failNext('chat.postMessage', { error: 'fatal_error' });
    let dmPost: Record<string, unknown> | undefined;
    const stop = h.slack.onCall((call) => {
      if (call.method === 'chat.postMessage' && call.args.channel === INPUT.requestedBy) dmPost ??= call.args;
    });
    expect(await recoverJobCard(h.bot.context.jobs, record)).toBe('done');
    stop();
    // Here it had: the card is in the DM (as the bot posted it).
    const landedAnyway = await fetch(`${h.slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRETS.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(dmPost),
    });
    expect(((await landedAnyway.json()) as { ok: boolean }).ok).toBe(true);

    await recoverJobCard(h.bot.context.jobs, (await current(record)) ?? record);
    const inDm = h.slack
      .callsTo('chat.postMessage')
      .filter((call) => call.response.ok === true && call.response.channel === landed()[0]?.response.channel);
    expect(inDm.filter((call) => call.args.thread_ts === undefined)).toHaveLength(1);
  });
});
