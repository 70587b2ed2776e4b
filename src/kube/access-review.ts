import type { KubeClient } from './client.ts';

/** The identity a TokenReview returned. */
export interface ReviewedUser {
  readonly username: string;
  readonly uid: string | undefined;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type TokenReviewResult =
  | { readonly authenticated: true; readonly user: ReviewedUser }
  | { readonly authenticated: false; readonly reason: string };

export interface AccessReviewResult {
  readonly allowed: boolean;
  readonly reason: string;
}

interface TokenReviewStatus {
  readonly status?: {
    readonly authenticated?: boolean;
    readonly audiences?: readonly string[];
    readonly error?: string;
    readonly user?: { readonly username?: string; readonly uid?: string; readonly groups?: readonly string[]; readonly extra?: Record<string, readonly string[]> };
  };
}

interface SubjectAccessReviewStatus {
  readonly status?: { readonly allowed?: boolean; readonly denied?: boolean; readonly reason?: string };
}

/**
 * Who is this bearer token? A TokenReview (`authentication.k8s.io/v1`), as
 * kube-rbac-proxy and the API server's delegating authenticator ask it. The
 * token travels only in the request body; it is never part of a returned
 * reason, so callers may log the result. Throws KubeApiError when the review
 * itself fails (the caller must not read that as "unauthenticated").
 */
export async function reviewToken(client: KubeClient, token: string, signal?: AbortSignal, audiences?: readonly string[]): Promise<TokenReviewResult> {
  const review = await client.request<TokenReviewStatus>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences === undefined ? {} : { audiences }) } },
    retry: true, // creating a review has no side effect, so it is safe to repeat
    ...(signal === undefined ? {} : { signal }),
  });
  const s = review.status;
  const user = s?.authenticated === true ? reviewedUser(s.user) : undefined;
  if (user === undefined) return { authenticated: false, reason: s?.error === undefined || s.error === '' ? 'token not authenticated' : s.error.slice(0, 200) };
  // With audiences asked for, the server answers which of them the token is for: none of them is not authenticated (as the API server's own delegating authenticator reads it).
  if (audiences !== undefined && !(s?.audiences ?? []).some((a) => audiences.includes(a))) return { authenticated: false, reason: 'token not issued for this audience' };
  return { authenticated: true, user };
}

function reviewedUser(u: NonNullable<TokenReviewStatus['status']>['user']): ReviewedUser | undefined {
  if (u?.username === undefined || u.username === '') return undefined;
  return { username: u.username, uid: u.uid, groups: [...(u.groups ?? [])], extra: { ...(u.extra ?? {}) } };
}

/**
 * May `user` do `verb` on the non-resource URL `path` (e.g. `get /metrics`)?
 * A SubjectAccessReview (`authorization.k8s.io/v1`) for the user's name,
 * uid, groups and extra, as the API server's delegating authorizer asks it.
 * Throws KubeApiError when the review itself fails.
 */
export async function reviewNonResourceAccess(client: KubeClient, user: ReviewedUser, nonResource: { readonly path: string; readonly verb: string }, signal?: AbortSignal): Promise<AccessReviewResult> {
  const review = await client.request<SubjectAccessReviewStatus>({
    method: 'POST',
    path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        ...(user.uid === undefined || user.uid === '' ? {} : { uid: user.uid }),
        groups: user.groups,
        extra: user.extra,
        nonResourceAttributes: { path: nonResource.path, verb: nonResource.verb },
      },
    },
    retry: true,
    ...(signal === undefined ? {} : { signal }),
  });
  const s = review.status;
  return { allowed: s?.allowed === true && s.denied !== true, reason: s?.reason ?? '' };
}

/** What a bearer token may do: the combined answer of both reviews. */
export type AccessVerdict = 'allowed' | 'unauthenticated' | 'forbidden';

/**
 * kube-rbac-proxy's check in one call: a TokenReview, then (only for an
 * authenticated user) a SubjectAccessReview for `verb` on the non-resource
 * URL `path`. Throws KubeApiError when either review fails.
 */
export async function reviewBearerToken(client: KubeClient, token: string, nonResource: { readonly path: string; readonly verb: string }, signal?: AbortSignal): Promise<AccessVerdict> {
  const who = await reviewToken(client, token, signal);
  if (!who.authenticated) return 'unauthenticated';
  const access = await reviewNonResourceAccess(client, who.user, nonResource, signal);
  return access.allowed ? 'allowed' : 'forbidden';
}

/**
 * Who this client is to the API server: a SelfSubjectReview
 * (`authentication.k8s.io/v1`, allowed to every authenticated user), which
 * works for tokens and client certificates alike. Throws KubeApiError when
 * the review fails.
 */
export async function reviewSelf(client: KubeClient, signal?: AbortSignal): Promise<string> {
  const review = await client.request<{ readonly status?: { readonly userInfo?: { readonly username?: string } } }>({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    retry: true,
    ...(signal === undefined ? {} : { signal }),
  });
  const name = review.status?.userInfo?.username;
  if (name === undefined || name === '') throw new Error('SelfSubjectReview returned no username');
  return name;
}
