export type {
  AssistantQuery,
  FeedbackByPageQuery,
  FeedbackQuery,
  FeedbackSource,
  FeedbackStatus,
  MintlifyClientOptions,
  SearchesQuery,
  VisitorsQuery,
} from './client.js';
export { MintlifyClient } from './client.js';
export { cursorPages } from './cursorPages.js';
export type { AnyMintlifyError, MintlifyErrorKind, TimeoutPhase } from './errors.js';
export {
  ConnectionError,
  didNothing,
  ForbiddenError,
  InvalidRequestError,
  isMintlifyError,
  isPassingFailure,
  MintlifyError,
  NotFoundError,
  RateLimitedError,
  RedirectedError,
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
  AssistantConversation,
  AssistantPage,
  DeploymentState,
  DeploymentStatus,
  FeedbackByPage,
  FeedbackByPageRow,
  FeedbackEntry,
  FeedbackPage,
  JobStatus,
  PreviewDeployment,
  SearchesPage,
  SearchRow,
  VisitorsPage,
  VisitorsRow,
} from './schemas.js';
export {
  agentJobSchema,
  assistantPageSchema,
  feedbackByPageSchema,
  feedbackPageSchema,
  jobStatusSchema,
  searchesPageSchema,
  visitorsPageSchema,
} from './schemas.js';
