import type { Config } from '../config/index.ts';
import type { Controller, ControllerOptions } from '../controller/index.ts';
import { systemClock } from '../kernel/index.ts';
import { SelfCheck, decodeReport, selfCheckReporter, tallyTargets } from '../impairment/index.ts';
import type { PeerView } from '../impairment/index.ts';
import type { EventRecorder, Logger, Metrics } from '../observability/index.ts';
import type { ShardMembership } from '../sharding/index.ts';

/** GET /healthz of a peer's listener; any answer but a 2xx, or none in time, is a failed check. No credential is sent. */
async function checkPeer(address: string, signal: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(`http://${address}/healthz`, { signal, redirect: 'manual' });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * The peers the impairment stage checks: the proven members (ADR 0036), at
 * their pods' peer addresses; what each reports (failing, reached) comes
 * from its Lease, its address never does.
 */
function peersOf(sharding: ShardMembership): PeerView[] {
  const reports = new Map(sharding.peerLeases().map((l) => [l.holder, { report: decodeReport(l.peer), at: l.renewedAt }]));
  const out: PeerView[] = [];
  for (const m of sharding.peers()) {
    const r = reports.get(m.identity);
    // When it was published (its renewTime): the share rule compares only reports fresher than its own failures (ADR 0034).
    if (r?.report !== undefined) out.push({ identity: m.identity, report: { ...r.report, address: m.peerAddress }, ...(Number.isFinite(r.at) ? { reportedAt: r.at } : {}) });
  }
  return out;
}

/** The owned targets by namespace (the policy's, which is the pod's) and committed failure (ADR 0055). */
function* ownedTargets(controller: Controller): Generator<{ namespace: string; failing: boolean }> {
  for (const t of controller.targets.all()) {
    const slash = t.plan.policy.indexOf('/');
    yield { namespace: slash < 0 ? '' : t.plan.policy.slice(0, slash), failing: t.state.committed === 'failure' };
  }
}

/** Self-partition detection (ADR 0017). */
export function startSelfCheck(deps: { readonly config: Config; readonly controller: Controller; readonly sharding: ShardMembership | undefined; readonly log: Logger; readonly metrics: Metrics; readonly events: EventRecorder }): SelfCheck | undefined {
  const { config, controller, sharding } = deps;
  if (sharding === undefined || !config.selfCheck) return undefined;
  const { podName, namespace, podUid } = config.self;
  const pod = namespace === undefined || podName === undefined ? undefined : { kind: 'Pod' as const, apiVersion: 'v1', namespace, name: podName, uid: podUid ?? '' };
  return new SelfCheck({
    clock: systemClock,
    identity: config.identity,
    // Peers reach this replica where its pod (or, undeclared, its Lease claim) says: the report carries no address.
    address: undefined,
    peers: () => peersOf(sharding),
    local: () => tallyTargets(ownedTargets(controller)),
    check: checkPeer,
    thresholds: {
      unreachableAfterMs: config.impairedUnreachableAfterMs,
      failingShare: config.impairedFailingShare,
      failingMargin: config.impairedFailingMargin,
      minTargets: config.impairedMinTargets,
      recoverAfterMs: config.impairedRecoverAfterMs,
      failingSustainMs: config.impairedFailingSustainMs,
      minNamespaces: config.impairedMinNamespaces,
    },
    intervalMs: config.peerCheckIntervalMs,
    timeoutMs: config.peerCheckTimeoutMs,
    observe: selfCheckReporter({ log: deps.log, metrics: deps.metrics, events: deps.events, ...(pod === undefined ? {} : { pod }) }),
  });
}

/** Peer checks every interval; stands down when impaired, rejoins when recovered. */
export async function runSelfCheck(selfCheck: SelfCheck | undefined, sharding: ShardMembership | undefined, controller: Controller, signal: AbortSignal): Promise<void> {
  if (selfCheck === undefined || sharding === undefined) return;
  await selfCheck.run(signal, async (change) => {
    controller.gates.sweep(); // held False writes go out as soon as a peer check confirms
    if (change?.type === 'impaired') await sharding.standDown();
    if (change?.type === 'recovered') sharding.rejoin();
  });
}

/** The controller's write guard: every False write and remediation needs a peer check since (ADR 0017). */
export function guardOptions(on: boolean, selfCheck: () => SelfCheck | undefined, metrics: Metrics): Pick<ControllerOptions, 'confirmedSince' | 'onHeld'> {
  if (!on) return {};
  return {
    confirmedSince: (since) => selfCheck()?.confirmedSince(since) ?? false,
    onHeld: (action) => metrics.recordGuardHeld(action),
  };
}
