/**
 * Wiring of the fleet (no behaviour of its own; moved out of main.ts): shard
 * membership proven against the replicas' pods (ADR 0036), the peer channel
 * with its listener, token admission and second-opinion guard (ADR 0037),
 * self-partition detection (ADR 0017), and /metrics' token admission.
 */
export { fleetSummary, fleetView, shardingHooks, startSharding, vantageHere } from './sharding.ts';
export { startDebugEndpoint } from './debug.ts';
export type { Sharding } from './sharding.ts';
export { startPeerChannel } from './peer-channel.ts';
export type { PeerChannel } from './peer-channel.ts';
export { guardOptions, runSelfCheck, startSelfCheck } from './self-check.ts';
export { metricsAuthFor } from './metrics-guard.ts';
export type { MetricsGuard } from './metrics-guard.ts';
