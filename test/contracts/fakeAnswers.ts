/**
 * What the Mintlify fake may answer, operation by operation: the answers its spec declares, checked
 * with the spec's schema for that status, and the few statuses the spec does not declare for the
 * operation but Mintlify documents (README.md lists each, with why), checked with the error body the
 * spec names. Any other status is undocumented, and the check refuses it.
 *
 * The fake runs every answer it gives through `checkFakeAnswer` before sending it (injected faults
 * aside), so no test can pass against an answer the real service could not give.
 */
import type { FakeOperation } from '../fakes/mintlifyFakeHttp.js';
import { declaresResponse, type SpecName, validateComponent, validateResponse } from './openapi.js';

interface Operation {
  spec: SpecName;
  method: 'GET' | 'POST';
  /** The path as the spec writes it. */
  path: string;
  /** Statuses the spec does not declare for this operation, which the fake gives (README.md says why). */
  undeclared: readonly number[];
}

const JOB = '/v2/agent/{projectId}/job';
const analytics = (path: string): Operation => ({
  spec: 'analytics',
  method: 'GET',
  path: `/v1/analytics/{projectId}/${path}`,
  undeclared: [401, 403, 429],
});

export const FAKE_OPERATIONS: Record<FakeOperation, Operation> = {
  createJob: { spec: 'admin', method: 'POST', path: JOB, undeclared: [401, 403] },
  getJob: { spec: 'admin', method: 'GET', path: `${JOB}/{id}`, undeclared: [401, 403] },
  sendMessage: { spec: 'admin', method: 'POST', path: `${JOB}/{id}/message`, undeclared: [401, 403] },
  visitors: analytics('visitors'),
  feedback: analytics('feedback'),
  feedbackByPage: analytics('feedback/by-page'),
  searches: analytics('searches'),
  assistant: analytics('assistant'),
  // The deployments spec's server is https://api.mintlify.com/v1: its paths start after /v1.
  deployPreview: {
    spec: 'deploy',
    method: 'POST',
    path: '/project/preview/{projectId}',
    undeclared: [401, 429],
  },
  deploymentStatus: {
    spec: 'deploy',
    method: 'GET',
    path: '/project/update-status/{statusId}',
    undeclared: [401, 404],
  },
};

export interface AnswerCheck {
  ok: boolean;
  /** The schema the body was checked with, e.g. `admin GET /v2/agent/{projectId}/job/{id} 200`. */
  schema: string;
  /** `instancePath message` per problem, or why the status itself is not allowed; empty when ok. */
  errors: string[];
}

/**
 * The error body of a status the operation does not declare: the admin spec's `Error`, the analytics
 * spec's `AnalyticsErrorResponse`; the deployments spec has no component, and writes the same
 * `{error: string}` inline for each error it declares (400 and 403 of the preview, 404 of a workflow
 * trigger): the preview's 400 stands for it.
 */
function checkErrorBody(spec: SpecName, body: unknown): { schema: string; errors: string[] } {
  if (spec === 'admin')
    return { schema: 'admin #Error', errors: validateComponent('admin', 'Error', body).errors };
  if (spec === 'analytics') {
    return {
      schema: 'analytics #AnalyticsErrorResponse',
      errors: validateComponent('analytics', 'AnalyticsErrorResponse', body).errors,
    };
  }
  return {
    schema: "deploy's error body (as POST /project/preview/{projectId} 400)",
    errors: validateResponse('deploy', 'POST', '/project/preview/{projectId}', 400, body).errors,
  };
}

/** Whether `body` with `status` is an answer the spec allows for `operation`. */
export function checkFakeAnswer(operation: FakeOperation, status: number, body: unknown): AnswerCheck {
  const { spec, method, path, undeclared } = FAKE_OPERATIONS[operation];
  const declared = `${spec} ${method} ${path}`;
  if (declaresResponse(spec, method, path, status)) {
    const { errors } = validateResponse(spec, method, path, status, body);
    return { ok: errors.length === 0, schema: `${declared} ${status}`, errors };
  }
  if (!undeclared.includes(status)) {
    return {
      ok: false,
      schema: declared,
      errors: [`status ${status} is neither declared by the spec nor documented for this operation`],
    };
  }
  const { schema, errors } = checkErrorBody(spec, body);
  return { ok: errors.length === 0, schema: `${schema} (${status} is not declared by ${declared})`, errors };
}
