/**
 * The second opinion (issue 13, deliver 3; ADR 0018): before a replica acts
 * on a failure, the next replica in the pod's rendezvous order probes the
 * same target from its own node. Pure core (protocol, ledger), the asking
 * guard, the HTTP client and endpoint, and the token review behind it.
 */
export { allowedUsersReview } from './auth.ts';
export type { WhoIs } from './auth.ts';
export { httpAskPeer } from './client.ts';
export { secondOpinionEndpoint } from './endpoint.ts';
export type { SecondOpinionEndpointOptions } from './endpoint.ts';
export { AskError, SecondOpinionGuard } from './guard.ts';
export type { AskErrorReason, AskEvent, AskPeer, FallbackEvent, PeerAddress, Question, SecondOpinionEvent, SecondOpinionGuardOptions } from './guard.ts';
export { Ledger } from './ledger.ts';
export type { AskEnd, LedgerDecision } from './ledger.ts';
export { cleanMessage, maxRequestBytes, parseAnswer, parseRequest, requestBody, secondOpinionPath } from './protocol.ts';
export type { SecondOpinionAnswer, SecondOpinionRequest, SecondOpinionResult } from './protocol.ts';
export { secondOpinionReporter } from './report.ts';
