export type { MintlifyClientOptions, VisitorsPagesQuery, VisitorsQuery } from './client.js';
export { MintlifyClient } from './client.js';
export type { AnyMintlifyError, MintlifyErrorKind, TimeoutPhase } from './errors.js';
export {
  ConnectionError,
  ForbiddenError,
  InvalidRequestError,
  isMintlifyError,
  MintlifyError,
  NotFoundError,
  RateLimitedError,
  SchemaError,
  ServiceError,
  TimeoutError,
  UnauthorizedError,
  UnexpectedStatusError,
} from './errors.js';
export type { RetryPolicy, Sleep } from './retry.js';
export { backoffDelayMs, DEFAULT_RETRY_POLICY, parseRetryAfter } from './retry.js';
export type {
  AgentJob,
  DeploymentState,
  DeploymentStatus,
  JobStatus,
  PreviewDeployment,
  VisitorsPage,
  VisitorsRow,
} from './schemas.js';
export { agentJobSchema, FINAL_JOB_STATUSES, jobStatusSchema, visitorsPageSchema } from './schemas.js';
