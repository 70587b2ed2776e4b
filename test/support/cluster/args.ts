// Command-line flags for each component (control-plane.md §8).
import type { Pki } from './certs.ts';

export interface Ports {
  readonly etcdClient: number;
  readonly etcdPeer: number;
  readonly apiserver: number;
  readonly controllerManager: number;
  readonly scheduler: number;
}

/** Default Service range: bookkeeping only on the loopback plane, nothing sends traffic there. */
export const SERVICE_CIDR = '10.0.0.0/24';
/** Default kube-apiserver address. */
export const BIND_ADDRESS = '127.0.0.1';

/** Where the API server listens and which Service range the plane hands out. */
export interface PlaneAddresses {
  /** kube-apiserver's --bind-address and --advertise-address. @default '127.0.0.1' */
  readonly bindAddress: string;
  /** --service-cluster-ip-range of kube-apiserver and kube-controller-manager. @default '10.0.0.0/24' */
  readonly serviceCidr: string;
}

export const DEFAULT_ADDRESSES: PlaneAddresses = { bindAddress: BIND_ADDRESS, serviceCidr: SERVICE_CIDR };

export function etcdArgs(dataDir: string, p: Ports): string[] {
  const client = `http://127.0.0.1:${p.etcdClient}`;
  const peer = `http://127.0.0.1:${p.etcdPeer}`;
  return [
    `--data-dir=${dataDir}`, '--name=node0',
    `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=node0=${peer}`, '--initial-cluster-state=new',
    '--unsafe-no-fsync=true', '--auto-compaction-retention=1', '--quota-backend-bytes=8589934592',
    '--listen-metrics-urls=', '--log-level=warn',
  ];
}

/**
 * kube-apiserver's flags. With `realNodes` (docs/adr/0047-real-nodes.md) the plane is one
 * real kubelets can join and real pods can use: the Node authorizer (kubelets as
 * system:node:<name>), the ServiceAccount admission plugin (pods get their projected
 * token volume), the `kubernetes` Service's endpoints published (in-cluster clients
 * reach the server at its fabric address through kube-proxy), a client
 * certificate for the server's calls to kubelets (logs, exec) at their InternalIP, and Services of
 * webhooks resolved to their endpoints (the server runs in the root namespace, where
 * no kube-proxy translates ClusterIPs; pod IPs are routed there).
 */
export function apiserverArgs(pki: Pki, p: Ports, full: boolean, a: PlaneAddresses = DEFAULT_ADDRESSES, realNodes = false): string[] {
  const disabled = realNodes ? [] : [`--disable-admission-plugins=${full ? 'ServiceAccount' : 'ServiceAccount,TaintNodesByCondition'}`];
  const real = realNodes ? [`--kubelet-client-certificate=${pki.adminCert}`, `--kubelet-client-key=${pki.adminKey}`, '--enable-aggregator-routing=true',
    '--kubelet-preferred-address-types=InternalIP'] : []; // the nodes' names are not in any DNS
  return [
    `--etcd-servers=http://127.0.0.1:${p.etcdClient}`,
    `--bind-address=${a.bindAddress}`, `--secure-port=${p.apiserver}`, `--advertise-address=${a.bindAddress}`,
    `--tls-cert-file=${pki.servingCert}`, `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.clientCa}`,
    `--service-account-issuer=https://${a.bindAddress}:${p.apiserver}/`,
    `--service-account-key-file=${pki.saPub}`, `--service-account-signing-key-file=${pki.saKey}`,
    `--authorization-mode=${realNodes ? 'Node,RBAC' : 'RBAC'}`, `--service-cluster-ip-range=${a.serviceCidr}`,
    '--allow-privileged=true', ...disabled,
    `--endpoint-reconciler-type=${realNodes ? 'lease' : 'none'}`, '--enable-priority-and-fairness=false', ...real,
    '--max-requests-inflight=0', '--max-mutating-requests-inflight=0',
    `--cert-dir=${pki.dir}`,
  ];
}

const ALLOW_PATHS = '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics';

export function controllerManagerArgs(pki: Pki, kubeconfig: string, p: Ports, serviceCidr = SERVICE_CIDR): string[] {
  return [
    `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`, '--leader-elect=false',
    '--bind-address=127.0.0.1', `--secure-port=${p.controllerManager}`, ALLOW_PATHS,
    `--root-ca-file=${pki.servingCa}`, `--service-account-private-key-file=${pki.saKey}`,
    `--cluster-signing-cert-file=${pki.clientCa}`,
    `--cluster-signing-key-file=${pki.clientCaKey}`,
    `--service-cluster-ip-range=${serviceCidr}`, '--allocate-node-cidrs=false',
    '--kube-api-qps=100', '--kube-api-burst=200', `--cert-dir=${pki.dir}/kcm`,
  ];
}

export function schedulerArgs(kubeconfig: string, certDir: string, p: Ports): string[] {
  return [
    `--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`, '--leader-elect=false',
    '--bind-address=127.0.0.1', `--secure-port=${p.scheduler}`, ALLOW_PATHS, `--cert-dir=${certDir}`,
    '--kube-api-qps=100', '--kube-api-burst=200',
  ];
}

export function kwokArgs(kubeconfig: string, stagesFile: string, fallbackCidr: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`, `--config=${stagesFile}`,
    '--manage-all-nodes=false', '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--node-ip=127.0.0.1', `--cidr=${fallbackCidr}`, '--node-lease-duration-seconds=40',
  ];
}
