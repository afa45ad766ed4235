/**
 * The shapes of Mintlify's answers, written from the published specs (admin `AgentJob`,
 * analytics `VisitorsByPageResponse`). Objects are loose so fields Mintlify adds later are kept,
 * and only what the spec marks required is required: the client must accept all the spec allows.
 */
import { z } from 'zod';

export const jobStatusSchema = z.enum(['active', 'completed', 'archived', 'failed']);
export type JobStatus = z.infer<typeof jobStatusSchema>;

/** A job is finished once it reaches one of these: the docs say to poll until then. */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['completed', 'archived', 'failed'];

// Formats (uri, date-time) are not enforced: an odd timestamp must not make a finished job unreadable.
export const agentJobSchema = z.looseObject({
  id: z.string().optional(),
  status: jobStatusSchema.optional(),
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
});
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

/** POST /v1/project/preview/{projectId} (202): the deployment to follow, and where it will be. */
export const previewDeploymentSchema = z.looseObject({
  statusId: z.string().optional(),
  previewUrl: z.string().optional(),
});
export type PreviewDeployment = z.infer<typeof previewDeploymentSchema>;

export const deploymentStateSchema = z.enum(['queued', 'in_progress', 'success', 'failure']);
export type DeploymentState = z.infer<typeof deploymentStateSchema>;

/** GET /v1/project/update-status/{statusId}: a deployment's progress (no field is marked required). */
export const deploymentStatusSchema = z.looseObject({
  _id: z.string().optional(),
  status: deploymentStateSchema.optional(),
  summary: z.string().optional(),
  endedAt: z.string().optional(),
});
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
