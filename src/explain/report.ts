import type { Pod } from '../kube/index.ts';
import type { Controller } from '../controller/index.ts';
import type { ProbeHandler } from '../policy/index.ts';
import { confirmedResult } from '../results/index.ts';
import type { ResultJournal } from './journal.ts';

/** Where this replica stands in the fleet, as far as explaining a pod needs. */
export interface FleetView {
  readonly identity: string;
  /** "node n1 (zone a)": the vantage its verdicts come from; undefined when it does not know its node. */
  readonly vantage: () => string | undefined;
  /** The live members as this replica sees them; undefined before it joined (or without sharding). */
  readonly members: () => readonly string[] | undefined;
  /** Who is responsible for the pod among the members (vantage rules, ADR 0040); undefined when nobody is. */
  readonly owner: (pod: Pod) => string | undefined;
  readonly owns: (pod: Pod) => boolean;
  /** The pod has no replica that may probe it from outside its node (ADR 0040). */
  readonly noVantage?: ((pod: Pod) => boolean) | undefined;
  readonly standingDown?: (() => boolean) | undefined;
}

/** What one replica knows of one pod: `kubectl outprobe explain`'s document (version 1, documented in docs/operations.md). */
export interface PodReport {
  readonly version: 1;
  readonly replica: { readonly identity: string; readonly vantage: string | null; readonly standingDown: boolean };
  readonly at: string;
  readonly members: readonly string[] | null;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string; readonly node: string | null; readonly ip: string | null; readonly phase: string } | null;
  /** The replica responsible for the pod in this replica's view; null when none is. */
  readonly owner: string | null;
  readonly ownedHere: boolean;
  readonly noVantage: boolean;
  readonly targets: readonly TargetReport[];
  readonly gates: readonly GateReport[];
  readonly remediation: RemediationReport | null;
}

export interface TargetReport {
  readonly policy: string;
  readonly kind: string;
  readonly container: string;
  readonly probe: string;
  readonly periodSeconds: number;
  readonly successThreshold: number;
  readonly failureThreshold: number;
  /** The kubelet machine (kubelet-probes.md §3): the committed value, the last result and its run, on-hold. */
  readonly state: { readonly committed: string | null; readonly confirmed: string | null; readonly lastResult: string | null; readonly consecutive: number; readonly onHold: boolean; readonly stopped: boolean };
  readonly failingSince: string | null;
  readonly lastTransition: { readonly at: string; readonly from: string | null; readonly to: string; readonly cause: string } | null;
  readonly recent: readonly { readonly at: string; readonly result: string; readonly output: string; readonly durationMs: number }[];
}

export interface GateReport {
  readonly type: string;
  /** The condition on the pod as this replica's cache shows it. */
  readonly onPod: { readonly status: string; readonly reason: string | null; readonly message: string | null } | null;
  /** What this replica wants it to be, and where that write stands; null when it wants nothing. */
  readonly desired: { readonly status: string; readonly reason: string; readonly since: string; readonly write: string } | null;
  readonly held: { readonly guard: string; readonly reason: string; readonly since: string } | null;
}

export interface RemediationReport {
  readonly state: string;
  readonly probe: string | null;
  readonly container: string | null;
  readonly requestedAt: string | null;
  readonly lastOutcome: string | null;
}

/** The probe without its headers (they may carry credentials: never shown). */
export function probeText(h: ProbeHandler): string {
  switch (h.type) {
    case 'httpGet':
      return `httpGet ${h.scheme.toLowerCase()} :${String(h.port)}${h.path}`;
    case 'tcpSocket':
      return `tcpSocket :${String(h.port)}`;
    case 'grpc':
      return `grpc :${String(h.port)}${h.service === '' ? '' : ` service ${h.service}`}`;
    case 'exec':
      return `exec (${h.command.length} argument${h.command.length === 1 ? '' : 's'})`;
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

export interface PodReportInput {
  readonly controller: Controller;
  readonly journal: ResultJournal;
  readonly fleet: FleetView;
  readonly namespace: string;
  readonly name: string;
  readonly now: number;
}

/**
 * One pod as this replica knows it (pure over the controller's state): the
 * policies' targets on it with their machine state and last results, the
 * gate conditions it wants and why a write is held, a remediation pending.
 */
export function podReport(i: PodReportInput): PodReport {
  const { controller, fleet } = i;
  const pod = controller.pods.store.get(`${i.namespace}/${i.name}`);
  const base = {
    version: 1 as const,
    replica: { identity: fleet.identity, vantage: fleet.vantage() ?? null, standingDown: fleet.standingDown?.() ?? false },
    at: iso(i.now),
    members: fleet.members() ?? null,
  };
  if (pod === undefined) return { ...base, pod: null, owner: null, ownedHere: false, noVantage: false, targets: [], gates: [], remediation: null };
  return {
    ...base,
    pod: { namespace: pod.namespace, name: pod.name, uid: pod.uid, node: pod.nodeName ?? null, ip: pod.podIP ?? null, phase: pod.phase },
    owner: fleet.owner(pod) ?? null,
    ownedHere: fleet.owns(pod),
    noVantage: fleet.noVantage?.(pod) ?? false,
    targets: targetReports(controller, i.journal, pod.uid),
    gates: gateReports(controller, pod),
    remediation: remediationReport(controller, pod.uid),
  };
}

function remediationReport(controller: Controller, uid: string): RemediationReport | null {
  const r = controller.remediator.inspect(uid);
  if (r === undefined) return null;
  return { state: r.state, probe: r.probe ?? null, container: r.container ?? null, requestedAt: r.requestedAt === undefined ? null : iso(r.requestedAt), lastOutcome: r.lastOutcome ?? null };
}

function targetReports(controller: Controller, journal: ResultJournal, uid: string): TargetReport[] {
  const targets: TargetReport[] = [];
  for (const t of controller.targets.all()) {
    if (t.plan.podUid !== uid) continue;
    const p = t.plan.probe;
    const s = t.state;
    const last = journal.lastTransition(t.plan.key);
    targets.push({
      policy: t.plan.policy,
      kind: t.plan.kind,
      container: t.plan.container,
      probe: probeText(p.handler),
      periodSeconds: p.periodSeconds,
      successThreshold: p.successThreshold,
      failureThreshold: p.failureThreshold,
      state: { committed: s.committed, confirmed: confirmedResult(s), lastResult: s.lastResult, consecutive: s.resultRun, onHold: s.onHold, stopped: s.stopped },
      failingSince: t.failure === null ? null : iso(t.failure.since),
      lastTransition: last === undefined ? null : { at: iso(last.at), from: last.from, to: last.to, cause: last.cause },
      recent: journal.probes(t.plan.key).map((r) => ({ at: iso(r.at), result: r.result, output: r.output, durationMs: r.durationMs })),
    });
  }
  return targets.sort((a, b) => `${a.policy}/${a.container}/${a.kind}`.localeCompare(`${b.policy}/${b.container}/${b.kind}`));
}

function gateReports(controller: Controller, pod: Pod): GateReport[] {
  const held = controller.guards.heldFor(pod.uid);
  const entries = new Map(controller.gates.inspect(pod.uid).map((e) => [e.type, e]));
  const types = new Set([...pod.readinessGates, ...entries.keys()]);
  return [...types].sort().map((type) => {
    const c = pod.conditions.find((x) => x.type === type);
    const e = entries.get(type);
    const h = held.get(type);
    return {
      type,
      onPod: c === undefined ? null : { status: c.status, reason: c.reason ?? null, message: c.message ?? null },
      desired: e === undefined ? null : { status: e.desired.status, reason: e.desired.reason, since: iso(e.desiredAt), write: e.state },
      held: h === undefined || e?.state !== 'held' ? null : { guard: h.guard, reason: h.reason, since: iso(h.since) },
    };
  });
}
