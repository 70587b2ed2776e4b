// outprobe's replicas as the API server must see them for their membership to be proven
// (docs/adr/0036-membership-proven-by-the-api-server.md): a Deployment, a ReplicaSet it
// controls, and one Pod per replica process controlled by that ReplicaSet, Running and
// Ready with the replica's address as its pod IP and its node as nodeName; and each
// replica's peer token (docs/adr/0037-peer-channel.md): a TokenRequest of the fleet's
// ServiceAccount bound to the replica's Pod, audience outprobe.io/peer, in a file.
//
// For planes without kube-controller-manager (the loopback plane and the pod-network e2e
// planes): the test plays the controllers and the kubelet, so nothing else creates, scales
// or deletes these objects. A replica process gets `env()` (the downward API as the chart
// sets it) and `args()` (--peer-token-file, --peer-pod-selector).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeClient } from '../cluster/index.ts';

export const peerAudience = 'outprobe.io/peer';

export interface FleetOptions {
  readonly namespace: string;
  /** The Deployment's name (and the prefix of the ReplicaSet's). @default 'outprobe' */
  readonly name?: string;
  /** The ServiceAccount the pods run as (created if missing). @default 'outprobe' */
  readonly serviceAccount?: string;
  /** Pod labels (the chart's selector labels by default). */
  readonly labels?: Readonly<Record<string, string>>;
  /** The pods' `peer` container port. @default 9444 */
  readonly peerPort?: number;
  /** Use this existing Deployment (e.g. the chart's) instead of creating one; its selector gives the labels. */
  readonly existingDeployment?: boolean;
}

export interface FleetPod {
  readonly name: string;
  readonly uid: string;
  readonly ip: string;
  readonly node: string;
  /** The file holding this pod's peer token (a TokenRequest bound to it). */
  readonly peerTokenFile: string;
}

export interface Fleet {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly deploymentUid: string;
  readonly replicaSet: { readonly name: string; readonly uid: string };
  /** `app.kubernetes.io/name=…,app.kubernetes.io/instance=…` as --peer-pod-selector. */
  readonly selector: string;
  /** Creates the Pod of one replica (Running, Ready, `ip` on `node`) and its peer token file. */
  addReplica(name: string, where: { readonly ip: string; readonly node: string }): Promise<FleetPod>;
  /** The downward API of a replica's Pod, as the chart sets it. */
  env(pod: FleetPod): Record<string, string>;
  /** The flags the chart adds for the peer channel (the listener's address is the test's). */
  args(pod: FleetPod): string[];
  /** A token of the fleet's ServiceAccount (audience: the API server's), for a kubeconfig. */
  apiToken(): Promise<string>;
  /** Removes the token files. */
  cleanup(): void;
}

const rec = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
const uidOf = (o: Record<string, unknown>): string => String(rec(o['metadata'])['uid']);

/** A pod spec of the fleet: one container with the peer port, the fleet's ServiceAccount. */
function podSpec(serviceAccount: string, peerPort: number, nodeName?: string): Record<string, unknown> {
  return {
    serviceAccountName: serviceAccount,
    ...(nodeName === undefined ? {} : { nodeName }),
    containers: [{ name: 'outprobe', image: 'outprobe:test', ports: [{ name: 'metrics', containerPort: 8080 }, { name: 'peer', containerPort: peerPort }] }],
  };
}

/** Writes a pod's status as the kubelet would for a Running, Ready replica. */
export async function markRunningReady(kube: KubeClient, namespace: string, name: string, ip: string, ready = true): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const r = await kube.call('PATCH', `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    status: {
      phase: 'Running', podIP: ip, podIPs: [{ ip }], startTime: now,
      conditions: [{ type: 'PodScheduled', status: 'True' }, { type: 'Initialized', status: 'True' }, { type: 'ContainersReady', status: ready ? 'True' : 'False' }, { type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  }, 'application/strategic-merge-patch+json');
  if (r.status !== 200) throw new Error(`status of pod ${name}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
}

/** A token of `serviceAccount`, optionally bound to a pod, for `audiences` (the API server's own when absent). */
export async function requestToken(kube: KubeClient, namespace: string, serviceAccount: string, o: { readonly audiences?: readonly string[]; readonly pod?: { readonly name: string; readonly uid: string } } = {}): Promise<string> {
  const tr = await kube.create(`/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest',
    spec: {
      expirationSeconds: 3600,
      ...(o.audiences === undefined ? {} : { audiences: o.audiences }),
      ...(o.pod === undefined ? {} : { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: o.pod.name, uid: o.pod.uid } }),
    },
  });
  return String(rec(tr['status'])['token']);
}

/**
 * Creates the Deployment and ReplicaSet of a fleet (and its ServiceAccount if missing).
 * `kube` is an admin client.
 */
export async function createFleet(kube: KubeClient, o: FleetOptions): Promise<Fleet> {
  const { namespace } = o;
  const name = o.name ?? 'outprobe';
  const serviceAccount = o.serviceAccount ?? 'outprobe';
  const peerPort = o.peerPort ?? 9444;
  const existing = o.existingDeployment === true ? await kube.get(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}`) : undefined;
  const existingLabels = (rec(rec(existing?.['spec'])['selector'])['matchLabels'] as Record<string, string> | undefined);
  const labels = o.labels ?? existingLabels ?? { 'app.kubernetes.io/name': 'outprobe', 'app.kubernetes.io/instance': name };
  const sa = await kube.call('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount } });
  if (sa.status !== 201 && sa.status !== 409) throw new Error(`ServiceAccount ${serviceAccount}: HTTP ${sa.status}`);
  const template = { metadata: { labels }, spec: podSpec(serviceAccount, peerPort) };
  const dep = existing ?? await kube.create(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace, labels },
    spec: { replicas: 0, selector: { matchLabels: labels }, template },
  });
  const deploymentUid = uidOf(dep);
  const rsName = `${name}-5d8f7c9b6`;
  const rs = await kube.create(`/apis/apps/v1/namespaces/${namespace}/replicasets`, {
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: { name: rsName, namespace, labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: deploymentUid, controller: true, blockOwnerDeletion: true }] },
    spec: { replicas: 0, selector: { matchLabels: labels }, template },
  });
  const replicaSet = { name: rsName, uid: uidOf(rs) };
  const dir = mkdtempSync(path.join(tmpdir(), `fleet-${namespace}-`));
  return {
    namespace,
    serviceAccount,
    deploymentUid,
    replicaSet,
    selector: Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(','),
    async addReplica(podName, where) {
      const created = await kube.create(`/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name: podName, namespace, labels, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsName, uid: replicaSet.uid, controller: true, blockOwnerDeletion: true }] },
        spec: podSpec(serviceAccount, peerPort, where.node),
      });
      const uid = uidOf(created);
      await markRunningReady(kube, namespace, podName, where.ip);
      const token = await requestToken(kube, namespace, serviceAccount, { audiences: [peerAudience], pod: { name: podName, uid } });
      const peerTokenFile = path.join(dir, `${podName}.peer-token`);
      writeFileSync(peerTokenFile, token, { mode: 0o600 });
      return { name: podName, uid, ip: where.ip, node: where.node, peerTokenFile };
    },
    env: (pod) => ({ POD_NAME: pod.name, POD_NAMESPACE: namespace, POD_UID: pod.uid, NODE_NAME: pod.node, POD_IP: pod.ip }),
    args: (pod) => ['--peer-token-file', pod.peerTokenFile, '--peer-pod-selector', Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',')],
    apiToken: () => requestToken(kube, namespace, serviceAccount),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A kubeconfig that authenticates with `token` against the plane of `adminKubeconfig` (its cluster entry). */
export function tokenKubeconfig(adminKubeconfig: unknown, token: string, namespace: string): string {
  const admin = adminKubeconfig as { clusters: { cluster: Record<string, unknown> }[] };
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
    clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa', namespace } }],
  });
}
