import type { FleetReport } from './fleet.ts';
import type { PodReport, RemediationReport, TargetReport } from './report.ts';

/** What the plugin read through the API, beside what the replicas answered. */
export interface ApiView {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string; readonly node: string | null; readonly ip: string | null; readonly phase: string; readonly gates: readonly string[]; readonly conditions: readonly { readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string; readonly lastTransitionTime?: string }[] };
  /** The policies whose selector matches the pod: `namespace/name` and a summary of what they do. */
  readonly policies: readonly { readonly key: string; readonly summary: string }[];
  /** The live shard members: identity, node, zone. */
  readonly members: readonly { readonly identity: string; readonly node: string | null; readonly zone: string | null }[];
  /** outprobe's Events about the pod, newest last. */
  readonly events: readonly { readonly at: string; readonly reason: string; readonly message: string; readonly from: string }[];
}

/** A replica's answer, or why it could not be read. */
export type ReplicaAnswer<T> = { readonly identity: string; readonly report: T } | { readonly identity: string; readonly error: string };

const one = (s: string | null | undefined, n = 160): string => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim();
  return t.length <= n ? t : `${t.slice(0, n)}…`;
};

/**
 * `kubectl outprobe explain`'s text: the pod, the policies selecting it, the
 * owner and its vantage, each gate (on the pod, desired, held and why), each
 * target's kubelet machine and last results, a remediation pending, and
 * outprobe's last Events about the pod. Pure; the plugin prints it.
 */
export function printExplain(api: ApiView, answers: readonly ReplicaAnswer<PodReport>[]): string {
  const reports = answers.flatMap((a) => ('report' in a ? [a.report] : []));
  const owning = reports.find((r) => r.ownedHere);
  const out = [...podLines(api), ...ownerLines(api, answers, reports, owning), 'Gates:'];
  if (api.pod.gates.length === 0) out.push('  (the pod lists no readiness gate)');
  for (const type of api.pod.gates) out.push(...gateLines(api, type, owning));
  out.push('Targets:');
  if (owning === undefined) out.push('  (no replica that owns the pod answered: its probe state is unknown here)');
  else if (owning.targets.length === 0) out.push('  (the owner probes nothing on this pod)');
  for (const t of owning?.targets ?? []) out.push(...targetLines(t));
  out.push(`Remediation:  ${remediationText(owning?.remediation ?? null)}`, 'Events:');
  if (api.events.length === 0) out.push('  (none from outprobe)');
  for (const e of api.events) out.push(`  ${e.at}  ${e.reason}  ${one(e.message, 200)}  (${e.from})`);
  return `${out.join('\n')}\n`;
}

function podLines(api: ApiView): string[] {
  const p = api.pod;
  const out = [
    `Pod:          ${p.namespace}/${p.name} (uid ${p.uid})`,
    `Node:         ${p.node ?? '(not scheduled)'}   IP: ${p.ip ?? '(none)'}   Phase: ${p.phase}`,
    `Policies:     ${api.policies.length === 0 ? '(none selects this pod)' : ''}`,
  ];
  for (const pol of api.policies) out.push(`  ${pol.key}: ${pol.summary}`);
  return out;
}

function ownerLines(api: ApiView, answers: readonly ReplicaAnswer<PodReport>[], reports: readonly PodReport[], owning: PodReport | undefined): string[] {
  const owners = new Set(reports.map((r) => r.owner ?? '(none)'));
  const ownerId = owning?.replica.identity ?? reports[0]?.owner ?? null;
  const member = api.members.find((m) => m.identity === ownerId);
  const place = member === undefined ? '' : ` (node ${member.node ?? '?'}${member.zone === null ? '' : `, zone ${member.zone}`})`;
  const disagree = owners.size > 1 ? `   replicas disagree: ${[...owners].join(', ')} (a handover is under way)` : '';
  const out = [`Owner:        ${ownerId ?? '(no live replica owns it)'}${place}${disagree}`];
  if (owning !== undefined) {
    const blind = owning.noVantage ? '   NoVantage: no replica may probe this pod from outside its node; its gate is kept open' : '';
    out.push(`Vantage:      ${owning.replica.vantage ?? '(the owner does not know its node)'}${blind}`);
  }
  for (const a of answers) if ('error' in a) out.push(`  (replica ${a.identity} could not be asked: ${a.error})`);
  return out;
}

function gateLines(api: ApiView, type: string, owning: PodReport | undefined): string[] {
  const c = api.pod.conditions.find((x) => x.type === type);
  const out = [`  ${type}: ${conditionText(c)}`];
  if (c?.message !== undefined && c.message !== '') out.push(`    message: ${one(c.message, 300)}`);
  const g = owning?.gates.find((x) => x.type === type);
  const d = g?.desired ?? null;
  if (d !== null && (d.write !== 'confirmed' || d.status !== c?.status)) out.push(`    outprobe wants: ${d.status} ${d.reason} (since ${d.since}), write ${d.write}`);
  const h = g?.held ?? null;
  if (h !== null) out.push(`    HELD since ${h.since} by the ${h.guard} guard: ${h.reason}`);
  return out;
}

function conditionText(c: ApiView['pod']['conditions'][number] | undefined): string {
  if (c === undefined) return 'not set on the pod (the pod is not Ready until it is)';
  return `${c.status} ${c.reason ?? ''}${c.lastTransitionTime === undefined ? '' : ` since ${c.lastTransitionTime}`}`;
}

function targetLines(t: TargetReport): string[] {
  const s = t.state;
  const confirmed = s.confirmed === null ? ' (threshold not reached)' : ` (confirmed ${s.confirmed})`;
  const tail = `${s.stopped ? '; stopped' : ''}${t.failingSince === null ? '' : `; failing since ${t.failingSince}`}`;
  const out = [
    `  ${t.policy} ${t.kind} container ${t.container}: ${t.probe}, every ${t.periodSeconds}s, success ${t.successThreshold} / failure ${t.failureThreshold}`,
    `    state: committed ${s.committed ?? 'nothing yet'}; last result ${s.lastResult ?? 'none'} ×${s.consecutive} in a row${confirmed}; on-hold ${s.onHold ? 'yes' : 'no'}${tail}`,
  ];
  const last = t.lastTransition;
  if (last !== null) out.push(`    last change: ${last.from ?? '(none)'} → ${last.to} at ${last.at} (${last.cause})`);
  for (const r of t.recent) out.push(`    ${r.at}  ${r.result.padEnd(7)} ${String(r.durationMs).padStart(5)} ms  ${one(r.output)}`);
  return out;
}

function remediationText(rem: RemediationReport | null): string {
  if (rem === null) return 'none pending';
  const at = rem.requestedAt === null ? '' : `, requested ${rem.requestedAt}`;
  const outcome = rem.lastOutcome === null ? '' : `, last outcome ${rem.lastOutcome}`;
  return `${rem.probe ?? ''} ${rem.container ?? ''} ${rem.state}${at}${outcome}`.trim();
}

/** `kubectl outprobe status`'s text: the members and what each replica reports, and the policies' state. */
export function printStatus(members: ApiView['members'], answers: readonly ReplicaAnswer<FleetReport>[], policies: readonly { readonly key: string; readonly status: string; readonly ready: string; readonly failing: string; readonly notes: readonly string[] }[]): string {
  const out: string[] = [];
  out.push(`Replicas (${members.length} live member${members.length === 1 ? '' : 's'}):`);
  if (members.length === 0) out.push('  (no live member: no pod is probed; gates stay as they are, and are released after the orphan bound)');
  for (const m of members) {
    const a = answers.find((x) => x.identity === m.identity);
    const where = `node ${m.node ?? '?'}${m.zone === null ? '' : `, zone ${m.zone}`}`;
    if (a === undefined) out.push(`  ${m.identity}  ${where}`);
    else if ('error' in a) out.push(`  ${m.identity}  ${where}  (not asked: ${a.error})`);
    else {
      const r = a.report;
      out.push(`  ${m.identity}  ${where}  ${r.replica.standingDown ? 'STANDING DOWN (impaired)' : r.ready ? 'ready' : 'not ready'}  pods ${r.pods}  targets ${r.targets.readiness}/${r.targets.liveness}/${r.targets.startup} (readiness/liveness/startup)  writes pending ${r.gateWrites.pending}, held ${r.gateWrites.held}  lag ${r.schedulerLagMs} ms`);
    }
  }
  for (const a of answers) if (!members.some((m) => m.identity === a.identity)) out.push(`  ${a.identity}  (answered, but holds no live shard Lease)${'report' in a ? `  pods ${a.report.pods}` : ''}`);
  out.push(`Policies (${policies.length}):`);
  for (const p of policies) {
    out.push(`  ${p.key}  ${p.status}  ready ${p.ready}  failing ${p.failing}`);
    for (const n of p.notes) out.push(`    ${n}`);
  }
  return `${out.join('\n')}\n`;
}
