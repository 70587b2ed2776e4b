import type { Config } from '../config/index.ts';
import type { Controller } from '../controller/index.ts';
import { systemClock, systemRandom } from '../kernel/index.ts';
import { KubeClient, reviewSelf, reviewToken } from '../kube/index.ts';
import type { EventRecorder, Logger, Metrics, ReviewLane } from '../observability/index.ts';
import { PeerAuth, PeerTokenFile, peerAudience, peerIdentity, plainAddress, serviceAccountUser, startPeerServer } from '../peer/index.ts';
import { vantageReportEndpoint, vantageReportPath } from '../vantage/index.ts';
import type { PeerHandler, PeerReview, PeerServer } from '../peer/index.ts';
import { SecondOpinionGuard, httpAskPeer, secondOpinionEndpoint, secondOpinionPath, secondOpinionReporter } from '../secondopinion/index.ts';
import type { Sharding } from './sharding.ts';

/** The peer channel as main needs it (ADR 0037). */
export interface PeerChannel {
  /** The second-opinion guard, when this replica can ask (a peer token file and sharding). */
  readonly guard: SecondOpinionGuard | undefined;
  /** How the log line at start describes the second opinion. */
  readonly mode: 'on' | 'answering only' | 'off';
  /** The bound peer listener's port; undefined without sharding. */
  readonly port: number | undefined;
  close(): Promise<void>;
}

interface Deps {
  readonly config: Config;
  readonly client: KubeClient;
  readonly log: Logger;
  readonly metrics: Metrics;
  readonly events: EventRecorder;
  /** Set once membership is built (after the listener has its port). */
  readonly sharding: () => Sharding | undefined;
  readonly controller: () => Controller;
}

/** Reviews of peer tokens, each admission lane on a token bucket of its own so strangers never spend a member's budget. */
function laneClients(deps: Deps): Record<ReviewLane, KubeClient> {
  const { config, client, metrics } = deps;
  const make = (lane: ReviewLane, qps: number, burst: number): KubeClient => new KubeClient({
    connection: client.connection, clock: systemClock, random: systemRandom, qps, burst, maxAttempts: 2, http2: config.kubeApiHttp2,
    userAgent: `outprobe/${config.identity}/peer-auth-${lane}`, onRequest: (r) => metrics.recordApiRequest(r),
  });
  return { member: make('member', 5, 20), stranger: make('stranger', 2, 4) };
}

/**
 * Who may ask (ADR 0037). Proven membership: a peer-audience token bound to
 * a member's pod, of the fleet's ServiceAccount. Declared membership
 * (development): a peer-audience token of an allowed user (by default this
 * replica's own, learnt with a SelfSubjectReview), no pod required.
 */
function peerAuth(deps: Deps, clients: Record<ReviewLane, KubeClient>): PeerAuth {
  const { config, log, metrics } = deps;
  let self: string | undefined;
  let asking: Promise<void> | undefined;
  const declaredUsers = (): ReadonlySet<string> | undefined => {
    if (config.secondOpinionAllowedUsers.length > 0) return new Set(config.secondOpinionAllowedUsers);
    asking ??= reviewSelf(clients.member, AbortSignal.timeout(10_000)).then((name) => {
      self = name;
    }, () => {
      asking = undefined; // asked again on the next request
    });
    return self === undefined ? undefined : new Set([self]);
  };
  const fleetUser = (): string | undefined => {
    const proof = deps.sharding()?.proof;
    if (proof === undefined) return undefined;
    const fleet = proof.fleet();
    return 'kind' in fleet ? undefined : serviceAccountUser(config.leaseNamespace ?? deps.client.connection.namespace, fleet.serviceAccount);
  };
  const proven = (): boolean => deps.sharding()?.proof !== undefined;
  return new PeerAuth({
    clock: systemClock,
    review: async (token, lane): Promise<PeerReview> => {
      const result = await reviewToken(clients[lane], token, AbortSignal.timeout(10_000), [peerAudience]);
      if (proven()) return peerIdentity(result);
      return result.authenticated ? { username: result.user.username, podName: '', podUid: '', nodeName: undefined } : { refused: 'not authenticated for the peer audience' };
    },
    isFleetUser: (username) => (proven() ? username === fleetUser() : declaredUsers()?.has(username) === true),
    isMember: (podName, podUid) => !proven() || deps.sharding()?.sharding.memberByPod(podName, podUid) !== undefined,
    isMemberAddress: (ip) => deps.sharding()?.sharding.peers().some((m) => m.podIP === ip) ?? false,
    onError: (err) => log.warn('peer token review failed', { error: String(err) }),
    onAdmission: (lane, result) => metrics.peer.recordAdmission('second_opinion', lane, result),
  });
}

/**
 * The peer listener (`--peer-addr`) with the second-opinion endpoint behind
 * PeerAuth, and the guard that asks peers with this replica's peer token
 * (`--peer-token-file`), never its API token (ADR 0018, ADR 0037).
 */
export async function startPeerChannel(deps: Deps): Promise<PeerChannel> {
  const { config, log, metrics } = deps;
  if (!config.sharding) return { guard: undefined, mode: config.secondOpinion ? 'answering only' : 'off', port: undefined, close: () => Promise.resolve() };
  const clients = laneClients(deps);
  const routes = new Map<string, PeerHandler>();
  const auth = peerAuth(deps, clients);
  // Several vantages report their verdicts to a pod's owner (ADR 0058); the sender must be the member at its address.
  routes.set(vantageReportPath, vantageReportEndpoint({
    authorize: (a, from) => auth.authorize(a, from),
    isFrom: (from, address) => deps.sharding()?.sharding.peers().some((m) => m.identity === from && m.podIP === plainAddress(address)) ?? false,
    accept: (batch) => deps.controller().vantageReports(batch),
  }));
  if (config.secondOpinion) {
    routes.set(secondOpinionPath, secondOpinionEndpoint({ authorize: (a, from) => auth.authorize(a, from), answer: (req, signal) => deps.controller().secondOpinion(req, signal) }));
  }
  const server: PeerServer = await startPeerServer({ host: config.peerHost, port: config.peerPort, routes });
  const closeAll = async (): Promise<void> => {
    await server.close();
    await Promise.all([clients.member.close(), clients.stranger.close()]);
  };
  if (!config.secondOpinion) return { guard: undefined, mode: 'off', port: server.port, close: closeAll };
  if (config.peerTokenFile === undefined) {
    log.warn('no --peer-token-file: this replica cannot ask its peers for a second opinion and acts on its own probes (it still answers theirs)');
    return { guard: undefined, mode: 'answering only', port: server.port, close: closeAll };
  }
  const token = new PeerTokenFile({ path: config.peerTokenFile, clock: systemClock });
  const guard = new SecondOpinionGuard({
    clock: systemClock,
    identity: config.identity,
    peers: () => deps.sharding()?.sharding.peers().map((m) => ({ identity: m.identity, address: m.peerAddress })) ?? [],
    order: (ids, podUid) => deps.sharding()?.sharding.secondOpinionOrder(podUid, ids) ?? [...ids],
    ask: httpAskPeer(() => token.token()),
    observe: secondOpinionReporter({ log, metrics, events: deps.events, identity: config.identity }),
    onSettled: () => {
      const c = deps.controller();
      c.gates.sweep();
      c.remediator.step();
    },
    ...(config.secondOpinionUnavailableAfterMs === undefined ? {} : { unavailableAfterMs: config.secondOpinionUnavailableAfterMs }),
  });
  return { guard, mode: 'on', port: server.port, close: closeAll };
}
