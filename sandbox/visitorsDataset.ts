import type { VisitorsRow } from '../src/mintlify/index.js';

/**
 * A made-up docs site's visitors, the same on every run: a few hundred pages with realistic paths,
 * a long tail, and more AI readers on reference pages than on guides. `week` 0 is the week the
 * digest covers; week 1 is the one before, a little different, so week-over-week has something to say.
 */

export interface VisitorsWeek {
  rows: VisitorsRow[];
  totals: { human: number; ai: number; total: number };
}

const RESOURCES = ['projects', 'deployments', 'domains', 'users', 'teams', 'api-keys', 'webhooks', 'logs'];
const VERBS = ['list', 'get', 'create', 'update', 'delete'];
const CLI = ['init', 'dev', 'deploy', 'login', 'logout', 'env', 'logs', 'rollback', 'domains', 'whoami'];
const GUIDES = [
  'authentication',
  'custom-domains',
  'environment-variables',
  'monorepos',
  'migrating-from-v1',
  'preview-deployments',
  'rate-limits',
  'single-sign-on',
  'caching',
  'webhooks',
  'testing-locally',
  'ci-cd',
  'observability',
  'rollbacks',
  'secrets',
  'edge-functions',
];
const INTEGRATIONS = ['github', 'gitlab', 'bitbucket', 'slack', 'datadog', 'sentry', 'vercel', 'terraform'];
const SDKS = ['typescript', 'python', 'go', 'ruby'];

/** Every path of the site, most visited first (before noise). */
function sitePaths(): Array<{ path: string; aiShare: number }> {
  const page = (path: string, aiShare: number) => ({ path, aiShare });
  return [
    page('/quickstart', 0.12),
    page('/introduction', 0.1),
    page('/installation', 0.15),
    page('/cli/deploy', 0.2),
    page('/api-reference/introduction', 0.45),
    page('/guides/authentication', 0.18),
    page('/concepts/projects', 0.2),
    page('/cli/dev', 0.2),
    page('/guides/environment-variables', 0.2),
    page('/api-reference/authentication', 0.5),
    page('/changelog', 0.05),
    page('/pricing', 0.03),
    ...GUIDES.map((guide) => page(`/guides/${guide}`, 0.18)),
    ...CLI.map((command) => page(`/cli/${command}`, 0.25)),
    ...SDKS.flatMap((sdk) => [
      page(`/sdks/${sdk}/overview`, 0.35),
      page(`/sdks/${sdk}/installation`, 0.3),
      page(`/sdks/${sdk}/errors`, 0.4),
    ]),
    ...RESOURCES.flatMap((resource) => VERBS.map((verb) => page(`/api-reference/${resource}/${verb}`, 0.55))),
    ...INTEGRATIONS.map((tool) => page(`/integrations/${tool}`, 0.15)),
    ...['projects', 'deployments', 'environments', 'regions', 'builds', 'domains', 'teams'].map((concept) =>
      page(`/concepts/${concept}`, 0.22),
    ),
    ...Array.from({ length: 80 }, (_, i) => page(`/changelog/2025-${changelogDate(i)}`, 0.08)),
    ...Array.from({ length: 60 }, (_, i) => page(`/api-reference/errors/E${1000 + i * 7}`, 0.6)),
    ...Array.from({ length: 70 }, (_, i) => page(`/blog/${BLOG[i % BLOG.length]}-${i + 1}`, 0.1)),
  ].filter((entry, i, all) => all.findIndex((other) => other.path === entry.path) === i);
}

const BLOG = ['release-notes', 'case-study', 'engineering', 'tutorial', 'announcement'];

function changelogDate(i: number): string {
  const month = 12 - Math.floor(i / 7);
  const day = 28 - (i % 7) * 4;
  return `${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** The visitors of one week: `week` 0 is the latest. */
export function visitorsWeek(week: 0 | 1): VisitorsWeek {
  const random = seeded(week === 0 ? 20_250_601 : 20_250_525);
  const rows = sitePaths().map(({ path, aiShare }, rank): VisitorsRow => {
    // A long tail: the n-th page gets about 1/n^0.9 of the first, give or take 30%.
    const base = 9_000 / (rank + 1) ** 0.9;
    const total = Math.max(1, Math.round(base * (0.7 + 0.6 * random()) * (week === 0 ? 1.06 : 1)));
    // AI readers grow faster than people, week on week.
    const aiGrowth = week === 0 ? 1.25 : 1;
    const ai = Math.round(total * Math.min(0.9, aiShare * aiGrowth * (0.7 + 0.6 * random())));
    // A few visitors are seen as both human and AI, so human + ai is a little more than total.
    const both = Math.round(Math.min(ai, total - ai) * 0.05);
    return { path, human: total - ai + both, ai, total };
  });
  const sum = (key: 'human' | 'ai' | 'total') => rows.reduce((total, row) => total + row[key], 0);
  // One visitor reads several pages: the site's unique visitors are far fewer than the pages' sum.
  const share = 0.41;
  return {
    rows: shuffled(rows, random),
    totals: {
      human: Math.round(sum('human') * share),
      ai: Math.round(sum('ai') * share * 1.3),
      total: Math.round(sum('total') * share),
    },
  };
}

/** Mintlify does not promise an order, so neither does the simulation. */
function shuffled<T>(items: T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** mulberry32: small, fast and the same everywhere. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
