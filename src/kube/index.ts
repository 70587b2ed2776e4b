/**
 * The kube stage: the only code that talks HTTP to the API server
 * (connection config, one rate-limited client, typed errors, reflectors).
 */
export { KubeClient, resourceOf } from './client.ts';
export type { KubeClientOptions, PatchType, RateBudget, RequestOptions, RequestRecord } from './client.ts';
export { connectionFor, connectionOf, fromKubeconfig, inCluster, loadConnection, loadKubeConfig, serviceAccountDir } from './config.ts';
export type { ConnectionParts, Credentials, KubeConnection, LoadOptions, TlsMaterial } from './config.ts';
export { KubeApiError, codeForStatus, isKubeError, kubeErrorCodes, parseRetryAfter, statusCauses } from './errors.ts';
export type { KubeErrorCode, StatusCause } from './errors.ts';
export { TokenBucket, backoffDelay } from './rate-limiter.ts';
export { Reflector, keyOf } from './reflector.ts';
export type { RawObject, ReflectorOptions, ReflectorSignal, StoreEvent, WatchEventType, WatchRestartReason } from './reflector.ts';
export { flatKey, podKey, projectionCacheSizes, projectPod } from './pod.ts';
export { InternCache, StringInterner } from './intern.ts';
export type { CustomObjectJson, EventJson, LeaseJson, ObjectJson, PodJson, Wire } from './models.ts';
export { compareResourceVersions } from './resource-version.ts';
export type { DeclaredProbe, DeclaredProbes, Pod, PodCondition, PodContainer, PodContainerStatus, PodPort } from './pod.ts';
export { reviewBearerToken, reviewNonResourceAccess, reviewSelf, reviewToken } from './access-review.ts';
export type { AccessReviewResult, AccessVerdict, ReviewedUser, TokenReviewResult } from './access-review.ts';
export { ReflectorSet } from './reflector-set.ts';
export type { ReflectorSetOptions } from './reflector-set.ts';
