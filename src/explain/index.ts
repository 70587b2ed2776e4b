/**
 * Explaining one pod (issue 30 item 3, ADR 0067): each replica keeps its
 * targets' last results (ResultJournal) and answers, on a loopback-only debug
 * endpoint reached through `kubectl port-forward`, what it knows of a pod: its
 * owner, the kubelet machine of every target, the gate writes it wants and why
 * one is held, a remediation pending. `kubectl-outprobe` (bin/) reads it.
 */
export { ResultJournal } from './journal.ts';
export type { JournalOptions, ProbeRecord, TransitionRecord } from './journal.ts';
export { podReport, probeText } from './report.ts';
export type { FleetView, GateReport, PodReport, PodReportInput, RemediationReport, TargetReport } from './report.ts';
export { isLoopback, startDebugServer } from './server.ts';
export type { DebugServer, DebugServerOptions, DebugSource } from './server.ts';
export { fleetReport } from './fleet.ts';
export type { FleetReport } from './fleet.ts';
export { printExplain, printStatus } from './print.ts';
export type { ApiView, ReplicaAnswer } from './print.ts';
