import { hostname } from 'node:os';
import type { Config } from '../config/index.ts';
import type { ControllerOptions, LocalCounts } from '../controller/index.ts';
import { orphanBoundMs } from '../failopen/index.ts';
import { systemClock, systemRandom } from '../kernel/index.ts';
import { KubeClient } from '../kube/index.ts';
import type { EventRecorder, Logger, Metrics } from '../observability/index.ts';
import { PodProof, ShardMembership, isLive, shardReporter } from '../sharding/index.ts';
import { LedgerStore } from '../writeback/index.ts';
import type { MemberClaim } from '../sharding/index.ts';
import type { Pod } from '../kube/index.ts';
import type { ProbePolicy } from '../policy/index.ts';
import { NodeZones, ReportSender, httpSendBatch, podSpread, vantageText } from '../vantage/index.ts';
import type { FleetView } from '../explain/index.ts';
import { PeerTokenFile } from '../peer/index.ts';

export interface Sharding {
  readonly sharding: ShardMembership;
  /** Node zones (ADR 0040), read with `get nodes`. */
  readonly zones: NodeZones;
  /** Undefined with --membership-proof=none. */
  readonly proof: PodProof | undefined;
  readonly leaseClient: KubeClient;
}

/** The address this replica declares where membership is not proven (`--advertise-address`, else $POD_IP). */
function declaredClaim(config: Config, peerPort: number): MemberClaim | undefined {
  const advertise = config.advertiseAddress;
  if (advertise === undefined) return undefined;
  const m = /^\[(.*)\]:(\d+)$/.exec(advertise) ?? /^([^:]+):(\d+)$/.exec(advertise);
  const ip = (m?.[1] ?? advertise).replace(/^\[|\]$/g, '');
  const port = m === null ? peerPort : Number(m[2]);
  return { podUid: config.self.podUid ?? 'undeclared', nodeName: config.self.nodeName ?? hostname(), podIP: ip, port, ...(config.zone === undefined ? {} : { zone: config.zone }) };
}

/**
 * Membership through Leases (ADR 0004), proven against the replicas' pods
 * (ADR 0036), on a client of its own (token bucket and connections), as
 * client-go's leader election is usually given: the burst of gate writes and
 * Events of a replica that has just gained hundreds of pods must never delay
 * the renewal that keeps it a member (seen in CI: renewals queued behind
 * them, every Lease expired, and ownership churned for seconds).
 * `peerPort`: the bound peer listener's port.
 */
export function startSharding(deps: {
  readonly config: Config;
  readonly client: KubeClient;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  readonly peerPort: number;
  /** The controller's policies, once it is built (each pod's vantage spread, ADR 0040). */
  readonly policies: () => Iterable<{ readonly policy: ProbePolicy | undefined }>;
}): Sharding {
  const { config, client, log, metrics } = deps;
  const leaseClient = new KubeClient({
    connection: client.connection,
    clock: systemClock,
    random: systemRandom,
    qps: 5,
    burst: 10,
    http2: config.kubeApiHttp2,
    userAgent: `outprobe/${config.identity}/shard`,
    onRequest: (r) => metrics.recordApiRequest(r),
  });
  const namespace = config.leaseNamespace ?? client.connection.namespace;
  const s = config.self;
  const proof = config.membershipProof === 'none' || s.podName === undefined || s.podUid === undefined || s.nodeName === undefined || s.podIP === undefined
    ? undefined
    : new PodProof({
        client: leaseClient,
        clock: systemClock,
        random: systemRandom,
        namespace,
        self: { podName: s.podName, podUid: s.podUid, nodeName: s.nodeName, podIP: s.podIP, ...(config.zone === undefined ? {} : { zone: config.zone }) },
        ...(config.peerPodSelector === undefined ? {} : { labelSelector: config.peerPodSelector }),
        leaseDurationMs: config.leaseDurationMs,
        peerPort: deps.peerPort,
        onSignal: (sig) => {
          if (sig.kind === 'error') log.warn('the watch of the replicas\' pods failed (membership cannot be proven until it lists them; RBAC: get/list/watch pods in the Lease namespace)', { namespace, error: String(sig.error), retryInMs: sig.retryInMs });
        },
      });
  if (proof === undefined) {
    log.warn('--membership-proof=none: every shard Lease is taken at its word (development only). Anyone who can write a Lease in the namespace can take pods out of probing and receive second-opinion asks', { namespace });
  }
  const pod = s.podName === undefined || s.namespace === undefined ? undefined : { kind: 'Pod' as const, apiVersion: 'v1', namespace: s.namespace, name: s.podName, uid: s.podUid ?? '' };
  const claim = proof === undefined ? declaredClaim(config, deps.peerPort) : undefined;
  const late: { sharding: ShardMembership | undefined } = { sharding: undefined };
  const zones = new NodeZones({
    client: leaseClient,
    clock: systemClock,
    onChange: () => late.sharding?.vantageChanged(),
    onDenied: (error) => log.warn('reading Nodes is refused (RBAC get nodes): zones are unknown unless replicas declare theirs (--zone); vantage.spread zone falls back to another node', { error: String(error) }),
  });
  const sharding = new ShardMembership({
    client: leaseClient,
    clock: systemClock,
    random: systemRandom,
    namespace,
    identity: config.identity,
    leaseDurationMs: config.leaseDurationMs,
    renewIntervalMs: config.leaseRenewIntervalMs,
    observe: shardReporter({ log, metrics, events: deps.events, namespace, ...(pod === undefined ? {} : { pod }) }),
    proof,
    claim,
    peerPort: deps.peerPort,
    vantage: { spreadOf: (p: Pod) => podSpread(deps.policies(), p), zoneOf: (node) => zones.zoneOf(node) },
  });
  late.sharding = sharding;
  return { sharding, zones, proof, leaseClient };
}

/**
 * The controller's sharding hooks (none without sharding: it probes every
 * pod). `fleetLive`: a live shard Lease, this replica's or a peer's; without
 * one for longer than max(30 s, 2 × the Lease duration) no replica owns any
 * pod and outprobe's gates are released (ADR 0035). `vantage`: pods without
 * one, and this replica's own for the gate messages (ADR 0040). `fleet`: the
 * members and who is responsible for a pod, for the fleet-wide readiness cap
 * (ADR 0032). With `ledger`, the fleet-wide remediation guard (ADR 0033): the
 * policies' remediation ledgers in the Lease namespace, peers' failing counts
 * and membership changes from the shard Leases, stalls from the event-loop
 * monitor.
 */
export function shardingHooks(
  shard: Sharding | undefined,
  config: Config,
  ledger?: { readonly client: KubeClient; readonly log: Logger; readonly stall?: { stalledWithin(ms: number): boolean } },
): Pick<ControllerOptions, 'owns' | 'gainedAt' | 'mayRemediate' | 'writesStatus' | 'aggregate' | 'fleetLive' | 'orphanAfterMs' | 'vantage' | 'several' | 'fleet' | 'fleetRemediation'> {
  if (shard === undefined) return {};
  const { sharding } = shard;
  const hooks = {
    vantage: {
      noVantage: (pod: Pod) => sharding.noVantage(pod),
      here: () => vantageHere(shard, config),
    },
    owns: (pod: Pod) => sharding.owns(pod),
    gainedAt: (pod: Pod) => sharding.gainedAt(pod),
    mayRemediate: (pod: Pod) => sharding.mayRemediate(pod),
    writesStatus: (uid: string) => sharding.writesStatus(uid),
    aggregate: (key: string, local: LocalCounts) => sharding.aggregate(key, local),
    fleetLive: () => (sharding.members?.length ?? 0) > 0 || sharding.peerLeases().length > 0,
    orphanAfterMs: orphanBoundMs(config.leaseDurationMs),
    fleet: { members: () => sharding.members, owner: (members: readonly string[], uid: string) => sharding.responsibleAmong(members, uid) },
    ...severalVantages(sharding, config, ledger?.log),
  };
  if (ledger === undefined) return hooks;
  const { client, log, stall } = ledger;
  const store = new LedgerStore({ client, clock: systemClock, namespace: config.leaseNamespace ?? client.connection.namespace, replica: config.identity });
  const fleet = {
    leaseDurationMs: config.leaseDurationMs,
    membershipChangedAt: () => sharding.changedAt,
    peers: () => sharding.peerLeases().filter((l) => isLive(l, systemClock.now())),
    failing: (key: string, local: number) => sharding.aggregate(key, { failing: local, erroring: 0, remediations: 0 }).failing,
    owns: (pod: Pod) => sharding.owns(pod),
  };
  return {
    ...hooks,
    fleetRemediation: {
      store,
      fleet,
      ...(stall === undefined ? {} : { stalledWithin: (ms: number) => stall.stalledWithin(ms) }),
      onError: (error: unknown) => log.warn('remediation ledger: taking an entry out failed (the window prunes it)', { error: String(error) }),
    },
  };
}

/** "node n1 (zone a)": where this replica's verdicts come from (ADR 0040); undefined when it does not know its node. */
export function vantageHere(shard: Sharding | undefined, config: Config): string | undefined {
  const node = config.self.nodeName;
  if (node === undefined) return undefined;
  const read = shard?.zones.zoneOf(node);
  return vantageText(node, read === undefined ? config.zone : (read ?? undefined));
}

/** What this replica knows of the fleet, for the debug endpoint (ADR 0067). */
export function fleetView(shard: Sharding | undefined, config: Config): FleetView {
  const s = shard?.sharding;
  return {
    identity: config.identity,
    vantage: () => vantageHere(shard, config),
    members: () => s?.members,
    owner: (pod: Pod) => {
      if (s === undefined) return config.identity;
      const members = s.members;
      return members === undefined ? undefined : s.responsibleAmong(members, pod.uid);
    },
    owns: (pod: Pod) => s?.owns(pod) ?? true,
    noVantage: (pod: Pod) => s?.noVantage(pod) ?? false,
    standingDown: () => s?.standingDown ?? false,
  };
}

/**
 * Several vantages per pod (ADR 0058): a pod's vantages from membership, and
 * the sender of this replica's verdicts to their owners over the peer
 * channel, with its peer token (ADR 0037). Without a peer token file a
 * replica cannot report: it is no other vantage (`count` > 1 policies are
 * judged by the vantages that can).
 */
function severalVantages(sharding: Sharding['sharding'], config: Config, log: Logger | undefined): Pick<ControllerOptions, 'several'> {
  const file = config.peerTokenFile;
  if (file === undefined) return {};
  const token = new PeerTokenFile({ path: file, clock: systemClock });
  // A failing channel is said once per owner and minute: the owner then hears nothing from this vantage, which abstains there.
  const warned = new Map<string, number>();
  const sender = new ReportSender({
    identity: config.identity,
    addressOf: (id) => sharding.peers().find((m) => m.identity === id)?.peerAddress,
    send: httpSendBatch(() => token.token()),
    onSent: (owner, count, ok) => {
      if (ok || systemClock.now() - (warned.get(owner) ?? -Infinity) < 60_000) return;
      warned.set(owner, systemClock.now());
      log?.warn('vantage reports not taken by the pod owner: it judges those pods without this vantage (it abstains there) until they are; sent again', { owner, reports: count });
    },
  });
  return { several: { vantages: (pod, count) => sharding.vantages(pod, count), placeOf: (id) => sharding.placeOf(id), sender } };
}

/** What the start log line says of the fleet. */
export function fleetSummary(config: Config, shard: Sharding | undefined, peer: { readonly mode: string; readonly port: number | undefined }): Record<string, unknown> {
  if (shard === undefined) return { sharding: 'off', secondOpinion: peer.mode };
  return {
    sharding: `Leases in ${config.leaseNamespace ?? shard.leaseClient.connection.namespace}`,
    membershipProof: shard.proof === undefined ? 'none (declared: development only)' : 'pod',
    secondOpinion: peer.mode,
    peerPort: peer.port,
  };
}
