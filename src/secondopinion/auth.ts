import type { MetricsAccess } from '../observability/index.ts';

/** Who a bearer token is, from a TokenReview; `undefined` when it is not authenticated. */
export type WhoIs = (token: string) => Promise<string | undefined>;

/**
 * The review behind the second-opinion endpoint (ADR 0018): a TokenReview,
 * then the username must be one of the allowed users (by default this
 * replica's own: every replica runs as the chart's ServiceAccount). Used with
 * the cached, bounded MetricsAuth, so a flood of made-up tokens costs the API
 * server a bounded number of reviews. `allowed()` failing (the replica could
 * not learn its own name yet) makes the review fail: 500, never allowed.
 */
export function allowedUsersReview(whoIs: WhoIs, allowed: () => Promise<ReadonlySet<string>>): (token: string) => Promise<MetricsAccess> {
  return async (token) => {
    const user = await whoIs(token);
    if (user === undefined) return 'unauthenticated';
    return (await allowed()).has(user) ? 'allowed' : 'forbidden';
  };
}
