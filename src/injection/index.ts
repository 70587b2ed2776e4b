/**
 * Readiness-gate injection (issue 15, ADR 0021): the pure decision of which
 * gates a new pod gets, the AdmissionReview answer, the webhook's HTTPS
 * server, its self-managed serving certificate and the namespace-label cache.
 * An I/O shell beside the pipeline that reads the controller's caches.
 */
export { issueCertificate, keyMatches } from './cert.ts';
export type { IssueOptions, KeyPair } from './cert.ts';
export { WebhookCertStore } from './cert-store.ts';
export type { CertStepReport, CertStoreOptions } from './cert-store.ts';
export { decideInjection, gatePatch, injectLabel, injectLabelValue, wantedGates } from './mutate.ts';
export type { InjectionDecision, InjectionView, JsonPatchOp, PodShape, SkipReason } from './mutate.ts';
export { NamespaceLabels } from './namespaces.ts';
export type { NamespaceLabelsOptions } from './namespaces.ts';
export { reviewPodCreate } from './review.ts';
export type { AdmissionReviewResponse, ReviewAnswer, ReviewResult } from './review.ts';
export { applyRotation, rotationAction } from './rotation.ts';
export type { RotationAction, RotationOptions, WebhookCerts } from './rotation.ts';
export { defaultMaxBodyBytes, mutatePodsPath, startWebhookServer } from './server.ts';
export type { WebhookReviewRecord, WebhookServer, WebhookServerOptions } from './server.ts';
export { Webhook } from './webhook.ts';
export type { CertSource, WebhookEvent, WebhookOptions } from './webhook.ts';
export { cacheView } from './view.ts';
export type { CacheViewOptions, CachedPolicy } from './view.ts';
