/**
 * Vantage (issue 28, ADR 0040): every verdict is taken from outside the
 * pod's node. Replicas' places (node from the proven pod, zone from the
 * Node), eligibility per policy spread, rendezvous over the eligible
 * replicas, and the second opinion's order. Pure core plus NodeZones (the
 * `get nodes` shell).
 */
export { assign, defaultSpread, eligible, secondOpinionOrder, spreads, strictest, vantageText } from './eligible.ts';
export type { Assignment, PodPlace, Spread, VantageMember } from './eligible.ts';
export { VantageOwnership } from './ownership.ts';
export type { ProvenPlace, VantageSource } from './ownership.ts';
export { podSpread } from './spread.ts';
export { NodeZones, zoneLabel } from './zones.ts';
export type { NodeZonesOptions } from './zones.ts';
export { combine, vantagesOf } from './several.ts';
export type { Verdict } from './several.ts';
export { VerdictBoard } from './board.ts';
export type { HeldVerdict } from './board.ts';
export { vantageReportEndpoint } from './report-endpoint.ts';
export type { VantageReportEndpointOptions } from './report-endpoint.ts';
export { batchBody, maxReportBytes, maxReportsPerRequest, parseBatch, vantageReportPath } from './report-protocol.ts';
export type { ReportBatch, VantageReport } from './report-protocol.ts';
export { ReportSender, httpSendBatch } from './report-sender.ts';
export type { ReportSenderOptions, SendBatch } from './report-sender.ts';
