import type { TokenReviewResult } from '../kube/index.ts';

/** The audience of the peer tokens: a projected ServiceAccount token of this audience is good for nothing but a peer (ADR 0037). */
export const peerAudience = 'outprobe.io/peer';

/** Extra keys of a pod-bound ServiceAccount token's TokenReview (the API server checks the pod still exists with that UID). */
export const podNameKey = 'authentication.kubernetes.io/pod-name';
export const podUidKey = 'authentication.kubernetes.io/pod-uid';
export const nodeNameKey = 'authentication.kubernetes.io/node-name';

/** Who a peer token speaks for, as the API server said. */
export interface PeerIdentity {
  readonly username: string;
  readonly podName: string;
  readonly podUid: string;
  /** Present where the API server adds it (Kubernetes 1.30+ for tokens of pods bound to a node). */
  readonly nodeName: string | undefined;
}

const one = (extra: Readonly<Record<string, readonly string[]>>, key: string): string | undefined => {
  const v = Object.hasOwn(extra, key) ? extra[key] : undefined;
  return Array.isArray(v) && v.length === 1 && typeof v[0] === 'string' && v[0] !== '' ? v[0] : undefined;
};

/**
 * The identity a TokenReview gives a peer token, or a reason it is none: a
 * token not bound to a pod (no pod-name and pod-uid extra) speaks for no
 * replica, whatever its user.
 */
export function peerIdentity(result: TokenReviewResult): PeerIdentity | { readonly refused: string } {
  if (!result.authenticated) return { refused: 'not authenticated for the peer audience' };
  const podName = one(result.user.extra, podNameKey);
  const podUid = one(result.user.extra, podUidKey);
  if (podName === undefined || podUid === undefined) return { refused: 'not a pod-bound token' };
  return { username: result.user.username, podName, podUid, nodeName: one(result.user.extra, nodeNameKey) };
}

/** `system:serviceaccount:<namespace>:<name>`, the username of a ServiceAccount's tokens. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}
