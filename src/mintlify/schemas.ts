/**
 * The shapes of Mintlify's answers, written from the published specs (admin `AgentJob`,
 * analytics `VisitorsByPageResponse`, `FeedbackResponse`, `FeedbackGroupedByPageResponse`,
 * `SearchesResponse`, `AssistantConversationsResponse`). Objects are loose so fields Mintlify adds later are kept,
 * and only what the spec marks required is required: the client must accept all the spec allows.
 */
import { z } from 'zod';

export const jobStatusSchema = z.enum(['active', 'completed', 'archived', 'failed']);
export type JobStatus = z.infer<typeof jobStatusSchema>;

/**
 * A status the spec does not list yet (Mintlify adds one) is read as absent, and kept in
 * `unrecognizedStatus`: the job (or deployment) stays readable, and the rest of the answer counts.
 * A status that is not even a string still breaks the schema.
 */
function unrecognizedStatusAsAbsent(known: readonly string[]) {
  return (value: unknown) => {
    if (typeof value !== 'object' || value === null) return value;
    const { status } = value as { status?: unknown };
    if (typeof status !== 'string' || known.includes(status)) return value;
    return { ...value, status: undefined, unrecognizedStatus: status };
  };
}

// Formats (uri, date-time) are not enforced: an odd timestamp must not make a finished job unreadable.
export const agentJobSchema = z.preprocess(
  unrecognizedStatusAsAbsent(jobStatusSchema.options),
  z.looseObject({
    id: z.string().optional(),
    status: jobStatusSchema.optional(),
    unrecognizedStatus: z.string().optional(),
    source: z
      .looseObject({
        repository: z.string().optional(),
        ref: z.string().nullable().optional(),
      })
      .optional(),
    model: z.string().optional(),
    prLink: z.string().nullable().optional(),
    createdAt: z.string().optional(),
    archivedAt: z.string().nullable().optional(),
  }),
);
export type AgentJob = z.infer<typeof agentJobSchema>;

const trafficCountsShape = {
  human: z.number(),
  ai: z.number(),
  total: z.number(),
};

export const visitorsPageSchema = z.looseObject({
  /** Site-wide; `total` is deduplicated across human and AI, so it is not `human + ai`. */
  totals: z.looseObject(trafficCountsShape),
  /** Per page; the order is not documented, so never assume it is sorted. */
  visitors: z.array(z.looseObject({ path: z.string(), ...trafficCountsShape })),
  hasMore: z.boolean(),
});
export type VisitorsPage = z.infer<typeof visitorsPageSchema>;
export type VisitorsRow = VisitorsPage['visitors'][number];

/**
 * GET /v1/analytics/{projectId}/feedback. The spec's items are an anyOf of three variants
 * (contextual: `helpful`, `contact`; code_snippet: `code`, `filename`, `lang`; agent and
 * thumbs_only: the base fields); read here as one lenient object with the base fields required.
 * `source` and `status` are enums in the spec but plain strings here: a value Mintlify adds
 * later must not make the whole page unreadable.
 */
const feedbackEntrySchema = z.looseObject({
  id: z.string(),
  path: z.string(),
  comment: z.string().nullable(),
  createdAt: z.string().nullable(),
  /** `code_snippet`, `contextual`, `agent` or `thumbs_only` today. */
  source: z.string(),
  /** `pending`, `in_progress`, `resolved` or `dismissed` today. */
  status: z.string(),
  /** Contextual feedback only: whether the reader found the page helpful. */
  helpful: z.boolean().optional(),
  contact: z.string().nullable().optional(),
  /** Code snippet feedback only. */
  code: z.string().optional(),
  filename: z.string().nullable().optional(),
  lang: z.string().nullable().optional(),
});
export type FeedbackEntry = z.infer<typeof feedbackEntrySchema>;

export const feedbackPageSchema = z.looseObject({
  feedback: z.array(feedbackEntrySchema),
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
});
export type FeedbackPage = z.infer<typeof feedbackPageSchema>;

/** GET /v1/analytics/{projectId}/feedback/by-page: counts per page path (no cursor: one page only). */
export const feedbackByPageSchema = z.looseObject({
  feedback: z.array(
    z.looseObject({
      path: z.string(),
      thumbsUp: z.number(),
      thumbsDown: z.number(),
      /** Code snippet feedback entries. */
      code: z.number(),
      total: z.number(),
    }),
  ),
  hasMore: z.boolean(),
});
export type FeedbackByPage = z.infer<typeof feedbackByPageSchema>;
export type FeedbackByPageRow = FeedbackByPage['feedback'][number];

/** GET /v1/analytics/{projectId}/searches: search terms, ordered by hits descending. */
export const searchesPageSchema = z.looseObject({
  searches: z.array(
    z.looseObject({
      searchQuery: z.string(),
      hits: z.number(),
      /** Click-through rate. */
      ctr: z.number(),
      topClickedPage: z.string().nullable(),
      lastSearchedAt: z.string(),
    }),
  ),
  /** Search events in the whole range (the sum of all hits), not just this page's terms. */
  totalSearches: z.number(),
  nextCursor: z.string().nullable(),
});
export type SearchesPage = z.infer<typeof searchesPageSchema>;
export type SearchRow = SearchesPage['searches'][number];

/** GET /v1/analytics/{projectId}/assistant: one row per assistant turn. */
export const assistantPageSchema = z.looseObject({
  conversations: z.array(
    z.looseObject({
      id: z.string(),
      timestamp: z.string(),
      query: z.string(),
      response: z.string(),
      /** `answer` or `clarifying_question` today; absent means `answer`. */
      responseType: z.string().optional(),
      sources: z.array(z.looseObject({ title: z.string(), url: z.string() })),
      /** `answered` or `unanswered` today (a plain string, so a new value still reads). */
      resolutionStatus: z.string(),
      queryCategory: z.string().nullable(),
      pageUrl: z.string().nullable(),
    }),
  ),
  nextCursor: z.string().nullable(),
  hasMore: z.boolean(),
});
export type AssistantPage = z.infer<typeof assistantPageSchema>;
export type AssistantConversation = AssistantPage['conversations'][number];

/** POST /v1/project/preview/{projectId} (202): the deployment to follow, and where it will be. */
export const previewDeploymentSchema = z.looseObject({
  statusId: z.string().optional(),
  previewUrl: z.string().optional(),
});
export type PreviewDeployment = z.infer<typeof previewDeploymentSchema>;

const deploymentStateSchema = z.enum(['queued', 'in_progress', 'success', 'failure']);
export type DeploymentState = z.infer<typeof deploymentStateSchema>;

/** GET /v1/project/update-status/{statusId}: a deployment's progress (no field is marked required). */
export const deploymentStatusSchema = z.preprocess(
  unrecognizedStatusAsAbsent(deploymentStateSchema.options),
  z.looseObject({
    _id: z.string().optional(),
    /** Absent, or one the spec does not list yet: followed as still deploying. */
    status: deploymentStateSchema.optional(),
    unrecognizedStatus: z.string().optional(),
    summary: z.string().optional(),
    endedAt: z.string().optional(),
  }),
);
export type DeploymentStatus = z.infer<typeof deploymentStatusSchema>;

/**
 * Error bodies: `{error}` (admin) or `{error, details?: [{message}]}` (analytics). Read leniently:
 * a proxy's HTML page or an odd body must still give a readable error, never a crash.
 */
export const errorBodySchema = z.looseObject({
  error: z.string().optional().catch(undefined),
  details: z
    .array(z.looseObject({ message: z.string() }))
    .optional()
    .catch(undefined),
});
