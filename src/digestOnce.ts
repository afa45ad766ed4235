import { setTimeout as sleepFor } from 'node:timers/promises';
import { webApi } from '@slack/bolt';
import { secretsOf } from './config.js';
import { createDigestContext } from './digest/digestContext.js';
import { periodKey, periodOfRun } from './digest/period.js';
import { postScheduledDigest } from './digest/postDigest.js';
import { readConfiguration } from './environment.js';
import { createLogger } from './log.js';
import { SENT_ONCE } from './slack/postedMessages.js';
import { verifySlackToken } from './slack/slackIdentity.js';
import { MintlifyClient } from './mintlify/index.js';
import { openStore, type Store } from './store/store.js';
import { USER_AGENT } from './version.js';

/**
 * `npm run digest` (after `npm run build`): posts one digest, of the 7 full days before today
 * in DIGEST_TIMEZONE, to DIGEST_CHANNEL, then exits. It honours the same once-per-period record
 * as the schedule, so a run again on the same day posts nothing new; a run on another day posts that
 * day's 7 days (an external scheduler runs it weekly).
 * Exit code: 0 when the digest is posted (now or before) or another instance is posting it;
 * 1 when it could not be posted. While a digest asked for is being prepared, it waits its turn.
 */
/** How often a run waiting for its turn (another digest being prepared) looks again. */
const TURN_CHECK_MS = 10_000;

async function digestOnce(): Promise<number> {
  // It posts and reads, and takes no request from Slack: no signing secret or app token needed.
  const config = readConfiguration('npm run digest cannot run', { receivesRequests: false });
  if (!config) return 1;
  const logger = createLogger({
    level: config.logLevel,
    secrets: secretsOf(config),
    name: 'docs-agent digest',
  });
  const channel = config.digest.channel;
  if (!channel) {
    logger.error(
      'DIGEST_CHANNEL is not set: set it to the ID of the channel the digest goes to (e.g. C0123456789)',
    );
    return 1;
  }

  let store: Store;
  try {
    store = await openStore(config.store, logger, { retentionMs: config.jobRetentionMs });
  } catch (error) {
    logger.error(`npm run digest cannot run: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  if (store.kind === 'memory') {
    logger.warn('REDIS_URL is not set: this run cannot know whether the digest was already posted');
  }
  const mintlify = new MintlifyClient({
    apiKey: config.mintlify.apiKey,
    baseUrl: config.mintlify.apiUrl,
    userAgent: USER_AGENT,
  });
  const shutdown = new AbortController();
  const stop = () => shutdown.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  try {
    const options = { logger, ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}) };
    const slack = new webApi.WebClient(config.slack.botToken, options);
    // The post itself is sent once: a run that finds it failed looks for it before posting again.
    const slackOnce = new webApi.WebClient(config.slack.botToken, { ...options, ...SENT_ONCE });
    // The bot's id tells its own earlier post of the digest from another app's look-alike.
    const { botId } = await verifySlackToken(slack, logger);
    const ctx = createDigestContext({
      config,
      mintlify,
      store,
      slack,
      slackOnce,
      botId,
      logger,
      shutdown: shutdown.signal,
    });
    const period = periodOfRun(ctx.now(), config.digest.timezone);
    let outcome = await postScheduledDigest(ctx, period, channel);
    // A digest asked for (`/docs-agent digest`) is being prepared: this one waits its turn, rather
    // than read the same analytics alongside it. An asked digest gives up within half an hour.
    if (outcome.kind === 'waiting_turn') {
      logger.info(`waiting while another digest is prepared; the digest for ${periodKey(period)} follows`);
    }
    while (outcome.kind === 'waiting_turn' && !shutdown.signal.aborted) {
      await sleepFor(TURN_CHECK_MS, undefined, { signal: shutdown.signal }).catch(() => undefined);
      if (!shutdown.signal.aborted) outcome = await postScheduledDigest(ctx, period, channel);
    }
    switch (outcome.kind) {
      case 'posted':
        return 0;
      case 'already_posted':
        logger.info(
          `the digest for ${periodKey(period)} was already posted to ${channel} (ts ${outcome.record.ts})`,
        );
        return 0;
      case 'in_progress':
        logger.info(`the digest for ${periodKey(period)} is being posted by another instance right now`);
        return 0;
      case 'failed':
        return 1; // logged where it failed
      case 'waiting_turn':
        logger.warn(`the digest for ${periodKey(period)} was not posted: stopped while waiting its turn`);
        return 1;
    }
  } catch (error) {
    logger.error(`npm run digest failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await Promise.allSettled([mintlify.close(), store.close()]);
  }
}

process.exitCode = await digestOnce();
