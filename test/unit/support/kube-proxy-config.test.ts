// The KubeProxyConfiguration the pod network's kube-proxies run with, and the
// control plane's address parameters (flags, serving-certificate SANs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse } from 'yaml';
import { apiserverArgs, controllerManagerArgs } from '../../support/cluster/args.ts';
import type { Ports } from '../../support/cluster/args.ts';
import type { Pki } from '../../support/cluster/certs.ts';
import { servingSans } from '../../support/cluster/certs.ts';
import { firstIp } from '../../support/cluster/cidr.ts';
import { kubeProxyConfig } from '../../support/cluster/kube-proxy.ts';

const base = { nodeName: 'n0', nodeIp: '198.18.0.10', clusterCidr: '198.18.0.0/20', kubeconfigPath: '/k/kubeconfig' };

void test('kube-proxy config: nftables, node-local listeners, no machine-wide conntrack settings', () => {
  const c = parse(kubeProxyConfig(base)) as Record<string, unknown>;
  assert.equal(c['apiVersion'], 'kubeproxy.config.k8s.io/v1alpha1');
  assert.equal(c['kind'], 'KubeProxyConfiguration');
  assert.equal(c['mode'], 'nftables');
  assert.equal(c['hostnameOverride'], 'n0');
  assert.equal(c['bindAddress'], '198.18.0.10');
  assert.equal(c['healthzBindAddress'], '198.18.0.10:10256');
  assert.equal(c['metricsBindAddress'], '198.18.0.10:10249');
  assert.equal(c['detectLocalMode'], 'ClusterCIDR');
  assert.equal(c['clusterCIDR'], '198.18.0.0/20');
  assert.deepEqual(c['clientConnection'], { kubeconfig: '/k/kubeconfig', qps: 50, burst: 100 });
  assert.deepEqual(c['nftables'], { syncPeriod: '10000ms', minSyncPeriod: '100ms', masqueradeAll: false });
  assert.deepEqual(c['conntrack'], {
    maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s', udpTimeout: '0s', udpStreamTimeout: '0s',
  });
  assert.equal(c['oomScoreAdj'], 0);
});

void test('kube-proxy config: periods and ports are parameters; a 0 minSyncPeriod is refused (kube-proxy would make it 1s)', () => {
  const c = parse(kubeProxyConfig({ ...base, minSyncPeriodMs: 1000, syncPeriodMs: 30_000, healthzPort: 1, metricsPort: 2 })) as Record<string, unknown>;
  assert.deepEqual(c['nftables'], { syncPeriod: '30000ms', minSyncPeriod: '1000ms', masqueradeAll: false });
  assert.equal(c['healthzBindAddress'], '198.18.0.10:1');
  assert.equal(c['metricsBindAddress'], '198.18.0.10:2');
  assert.throws(() => kubeProxyConfig({ ...base, minSyncPeriodMs: 0 }), /minSyncPeriodMs must be > 0/);
  assert.throws(() => kubeProxyConfig({ ...base, minSyncPeriodMs: 500, syncPeriodMs: 100 }), /syncPeriodMs \(100\) must be >= minSyncPeriodMs/);
  assert.throws(() => kubeProxyConfig({ ...base, nodeIp: 'node-0' }), /not an IPv4 address: 'node-0'/);
  assert.throws(() => kubeProxyConfig({ ...base, clusterCidr: '198.18.0.1/20' }), /host bits set/);
});

void test('firstIp: the kubernetes Service ClusterIP of a range', () => {
  assert.equal(firstIp('10.0.0.0/24'), '10.0.0.1');
  assert.equal(firstIp('198.18.15.0/24'), '198.18.15.1');
  assert.equal(firstIp('198.19.240.0/20'), '198.19.240.1');
  assert.throws(() => firstIp('10.0.0.0/31'), /too small/);
  assert.throws(() => firstIp('10.0.0/24'), /not an IPv4 address/);
  assert.throws(() => firstIp('10.0.0.0'), /not an IPv4 CIDR/);
});

void test('serving certificate SANs: 127.0.0.1 always, then the bind address and the first Service IP', () => {
  assert.equal(servingSans(['198.18.0.1', '198.18.15.1']),
    'DNS:localhost,IP:127.0.0.1,IP:198.18.0.1,IP:198.18.15.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc');
  assert.equal(servingSans(['127.0.0.1', '10.0.0.1']),
    'DNS:localhost,IP:127.0.0.1,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc');
});

void test('apiserver and controller-manager flags follow the plane addresses; defaults unchanged', () => {
  const pki = { dir: '/p', servingCert: 'c', servingKey: 'k', clientCa: 'ca', saPub: 'sp', saKey: 'sk', servingCa: 'sca', clientCaKey: 'cak' } as Pki;
  const ports: Ports = { etcdClient: 1, etcdPeer: 2, apiserver: 3, controllerManager: 4, scheduler: 5 };
  const flag = (args: string[], name: string): string[] => args.filter((a) => a.startsWith(`--${name}=`));
  const moved = apiserverArgs(pki, ports, true, { bindAddress: '198.18.0.1', serviceCidr: '198.18.15.0/24' });
  assert.deepEqual(flag(moved, 'bind-address'), ['--bind-address=198.18.0.1']);
  assert.deepEqual(flag(moved, 'advertise-address'), ['--advertise-address=198.18.0.1']);
  assert.deepEqual(flag(moved, 'service-cluster-ip-range'), ['--service-cluster-ip-range=198.18.15.0/24']);
  assert.deepEqual(flag(moved, 'etcd-servers'), ['--etcd-servers=http://127.0.0.1:1'], 'etcd stays on loopback');
  const dflt = apiserverArgs(pki, ports, true);
  assert.deepEqual(flag(dflt, 'bind-address'), ['--bind-address=127.0.0.1']);
  assert.deepEqual(flag(dflt, 'service-cluster-ip-range'), ['--service-cluster-ip-range=10.0.0.0/24']);
  const kcm = controllerManagerArgs(pki, '/k', ports, '198.18.15.0/24');
  assert.deepEqual(flag(kcm, 'service-cluster-ip-range'), ['--service-cluster-ip-range=198.18.15.0/24']);
  assert.deepEqual(flag(kcm, 'bind-address'), ['--bind-address=127.0.0.1'], 'health port stays on loopback');
  assert.deepEqual(flag(controllerManagerArgs(pki, '/k', ports), 'service-cluster-ip-range'), ['--service-cluster-ip-range=10.0.0.0/24']);
});
