import type { MintlifyFake } from '../test/fakes/mintlifyFake.js';

/**
 * What the made-up site's readers struggled with in the digest's week: thumbs down with a few
 * comments, searches that found nothing worth clicking, and questions the assistant could not
 * answer. The same on every run, so the digest's "Where readers struggled" always has something.
 */
export function seedStruggles(fake: MintlifyFake, weekStart: string): void {
  const at = `${weekStart}T10:00:00.000Z`;
  let id = 0;
  const vote = (path: string, helpful: boolean, comment: string | null = null) => ({
    id: `fb-${++id}`,
    path,
    comment,
    createdAt: at,
    source: 'contextual',
    status: 'pending',
    helpful,
    contact: null,
  });
  const votes = (path: string, down: number, up: number, comments: string[] = []) => [
    ...comments.map((comment) => vote(path, false, comment)),
    ...Array.from({ length: down - comments.length }, () => vote(path, false)),
    ...Array.from({ length: up }, () => vote(path, true)),
  ];
  fake.setFeedback([
    ...votes('/guides/custom-domains', 14, 3, ['The DNS step for apex domains is missing.']),
    ...votes('/cli/deploy', 9, 12, ['Which flag skips the build?']),
    ...votes('/api-reference/webhooks/create', 6, 1),
    ...votes('/quickstart', 2, 40),
  ]);
  const search = (searchQuery: string, hits: number, ctr: number, topClickedPage: string | null) => ({
    searchQuery,
    hits,
    ctr,
    topClickedPage,
    lastSearchedAt: at,
  });
  fake.setSearches([
    search('deploy', 310, 0.71, '/cli/deploy'),
    search('rollback database', 48, 0, null),
    search('api key', 120, 0.64, '/api-reference/api-keys/create'),
    search('wildcard domain', 33, 0, null),
    search('rate limit headers', 21, 0.05, '/guides/rate-limits'),
    search('sso okta', 17, 0, null),
  ]);
  let conversation = 0;
  const asked = (query: string, times: number, resolutionStatus: 'answered' | 'unanswered') =>
    Array.from({ length: times }, () => ({
      id: `c-${++conversation}`,
      timestamp: at,
      query,
      response:
        resolutionStatus === 'answered' ? 'See the quickstart.' : 'I could not find that in the docs.',
      sources: [],
      resolutionStatus,
      queryCategory: null,
      pageUrl: null,
    }));
  fake.setConversations([
    ...asked('How do I roll back a deployment that ran migrations?', 7, 'unanswered'),
    ...asked('How do I get started?', 20, 'answered'),
    ...asked('Can I use a wildcard domain on preview deployments?', 4, 'unanswered'),
    ...asked('Does the CLI work behind a proxy?', 3, 'unanswered'),
  ]);
}
