// Pure helpers of the simulated workloads and the kubeconfig writer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeconfigFor } from '../../support/cluster/kubeconfig.ts';
import { fakeNode } from '../../support/cluster/nodes.ts';
import { podPorts } from '../../support/workloads/index.ts';
import { isPodNetworkIp, isSimulatedPodIp, portKind } from '../../support/workloads/pods.ts';

void test('port kind follows the port name', () => {
  assert.equal(portKind('grpc-health'), 'grpc');
  assert.equal(portKind('tcp'), 'tcp');
  assert.equal(portKind('http'), 'http');
  assert.equal(portKind(''), 'http');
});

void test('only 127.x addresses other than the control plane are pod IPs', () => {
  assert.equal(isSimulatedPodIp('127.1.0.2'), true);
  assert.equal(isSimulatedPodIp('127.0.0.1'), false);
  assert.equal(isSimulatedPodIp('10.0.0.5'), false);
  assert.equal(isSimulatedPodIp('::1'), false);
  assert.equal(isSimulatedPodIp(undefined), false);
});

void test('pod network IPs are exactly 198.18.0.0/15', () => {
  assert.equal(isPodNetworkIp('198.18.0.1'), true);
  assert.equal(isPodNetworkIp('198.19.255.254'), true);
  assert.equal(isPodNetworkIp('198.20.0.1'), false);
  assert.equal(isPodNetworkIp('198.17.255.255'), false);
  assert.equal(isPodNetworkIp('127.1.0.2'), false);
  assert.equal(isPodNetworkIp(undefined), false);
});

void test('podPorts keeps TCP container ports of every container', () => {
  const ports = podPorts({ spec: { containers: [
    { ports: [{ containerPort: 80, name: 'http' }, { containerPort: 53, protocol: 'UDP' }] },
    { ports: [{ containerPort: 9090, name: 'grpc' }] },
  ] } });
  assert.deepEqual(ports, [{ port: 80, name: 'http', kind: 'http' }, { port: 9090, name: 'grpc', kind: 'grpc' }]);
});

void test('fake nodes get loopback pod CIDRs and the kwok annotation', () => {
  const node = fakeNode(3, '127.9.3.0/24') as { metadata: { annotations: Record<string, string> }; spec: { podCIDR: string } };
  assert.equal(node.spec.podCIDR, '127.9.3.0/24');
  assert.equal(node.metadata.annotations['kwok.x-k8s.io/node'], 'fake');
});

void test('kubeconfig embeds the CA and client certificate', () => {
  const kc = kubeconfigFor({ server: 'https://127.0.0.1:1', caPem: 'CA', certPem: 'CERT', keyPem: 'KEY' }) as {
    clusters: { cluster: Record<string, string> }[]; users: { user: Record<string, string> }[]; 'current-context': string;
  };
  assert.equal(kc.clusters[0]!.cluster['certificate-authority-data'], Buffer.from('CA').toString('base64'));
  assert.equal(kc.users[0]!.user['client-key-data'], Buffer.from('KEY').toString('base64'));
  assert.equal(kc['current-context'], 'outprobe');
});
