/**
 * The bot's queues, by name. Kept apart from their processors so that a process opens its queues
 * without loading the worker's code: a `SERVICES=web` process never loads it.
 */

/** Slack requests that need work: a start from any door, a steer, the form's submission, `/docs-agent digest`. */
export const REQUESTS_QUEUE = 'requests';
/** One delayed check per unfinished Mintlify job (jobs/followJobs.ts). */
export const FOLLOW_QUEUE = 'follow';
/** The weekly digest's job scheduler and its catch-up (digest/digestSchedule.ts). */
export const DIGEST_QUEUE = 'digest';
/** Preview deployments asked for finished jobs, and the checks of their status (previews/previews.ts). */
export const PREVIEW_QUEUE = 'previews';
export const PREVIEW_STATUS_QUEUE = 'preview-status';
