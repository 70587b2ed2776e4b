/**
 * Self-partition detection per replica (issue 13, ADR 0017): peers check each
 * other's /healthz and publish what they see on their shard Leases; a replica
 * cut off from its peers, or failing far more than they do, declares itself
 * impaired, stops acting and gives its pods away. Pure core (decide, state,
 * reach, the Lease annotation) and one I/O loop (SelfCheck).
 */
export { defaultThresholds, impairedNow, namespaceSpread, reachesPeers } from './decide.ts';
export type { ImpairmentInput, ImpairmentThresholds, NamespaceTally, PeerView, Verdict } from './decide.ts';
export { tallyTargets } from './tally.ts';
export type { LocalTally } from './tally.ts';
export { ReachTable } from './reach.ts';
export type { PeerReach } from './reach.ts';
export { decodeReport, encodeReport, maxReached } from './report-annotation.ts';
export { peerAnnotation } from '../sharding/index.ts';
export type { PeerReport } from './report-annotation.ts';
export { ImpairmentState, maxBackoff, strikeWindowMs } from './state.ts';
export type { Change } from './state.ts';
export { SelfCheck } from './self-check.ts';
export type { PeerCheck, SelfCheckEvent, SelfCheckOptions } from './self-check.ts';
export { selfCheckReporter } from './report.ts';
