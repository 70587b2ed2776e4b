import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pod, PodContainer } from '../../../src/kube/index.ts';
import type { ProbeSpec } from '../../../src/policy/index.ts';
import type { HttpProbeRequest } from '../../../src/probing/index.ts';
import { createHttpProber, ProbeDispatcher } from '../../../src/probing/index.ts';
import { AddressGuard, buildRequest } from '../../../src/targets/index.ts';
import { httpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * A hostNetwork pod's IP is its node's: outprobe probes only ports the
 * container declares there. Real servers on loopback stand in for the node:
 * `declared` is the container's port, `node` another port of the same IP
 * (the kubelet's 10250, say) that must never be connected to.
 */
describe('hostNetwork pods: only declared container ports are probed', () => {
  const guard = new AddressGuard(['127.0.0.0/8']);
  const dispatcher = new ProbeDispatcher();
  const prober = createHttpProber({ userAgent: 'kube-probe/1.37', dispatcher });
  let declared: Listening;
  let node: Listening;
  let nodeHits = 0;
  let container: PodContainer;

  const pod = (hostNetwork: boolean): Pod => ({
    uid: 'uid-1', namespace: 'kube-system', name: 'agent-1', resourceVersion: '1', labels: {}, nodeName: 'n1', phase: 'Running',
    podIP: '127.0.0.1', deletionTimestamp: undefined, hostNetwork, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: [],
    containers: [container], containerStatuses: [], conditions: [],
  });
  const http = (port: number | string, path = '/'): ProbeSpec => ({
    handler: { type: 'httpGet', path, port, scheme: 'HTTP', httpHeaders: [] },
    initialDelaySeconds: 0, timeoutSeconds: 2, periodSeconds: 10, successThreshold: 1, failureThreshold: 3, terminationGracePeriodSeconds: null,
  });

  const httpRequest = (port: number | string, path?: string): HttpProbeRequest => {
    const req = buildRequest(http(port, path), pod(true), 'agent', guard);
    assert.equal(req.type, 'httpGet', JSON.stringify(req));
    return req.request;
  };

  before(async () => {
    node = await httpServer((_req, res) => {
      nodeHits++;
      res.end('node secret');
    });
    declared = await httpServer((req, res) => {
      if (req.url === '/to-node') {
        res.writeHead(302, { location: `http://127.0.0.1:${node.port}/` });
        res.end();
        return;
      }
      res.end('agent ok');
    });
    container = { name: 'agent', ports: [{ name: 'metrics', containerPort: declared.port }], env: {}, sidecar: false };
  });
  after(async () => {
    await Promise.all([declared.close(), node.close(), dispatcher.close()]);
  });

  it('refuses an undeclared numeric port, for every probe type, without connecting', () => {
    const reason = `port ${node.port} is not a containerPort of container "agent" in a hostNetwork pod: not probed`;
    assert.deepEqual(buildRequest(http(node.port), pod(true), 'agent', guard), { type: 'error', error: reason });
    assert.deepEqual(buildRequest(http(String(node.port)), pod(true), 'agent', guard), { type: 'error', error: reason }, 'a numeric string is not a declared name');
    const tcp: ProbeSpec = { ...http(0), handler: { type: 'tcpSocket', port: node.port } };
    assert.deepEqual(buildRequest(tcp, pod(true), 'agent', guard), { type: 'error', error: reason });
    const grpc: ProbeSpec = { ...http(0), handler: { type: 'grpc', port: node.port, service: '' } };
    assert.deepEqual(buildRequest(grpc, pod(true), 'agent', guard), { type: 'error', error: reason });
    assert.equal(nodeHits, 0);
  });

  it('probes a declared port, by number or by name', async () => {
    for (const port of [declared.port, 'metrics']) {
      assert.deepEqual(await prober(httpRequest(port)), { kind: 'success', output: 'agent ok' });
    }
  });

  it('does not follow a redirect from a declared port to an undeclared one', async () => {
    const o = await prober(httpRequest(declared.port, '/to-node'));
    assert.deepEqual(o, { kind: 'errored', error: `Get "http://127.0.0.1:${node.port}/": not connected: port ${node.port} is not a containerPort of container "agent" in a hostNetwork pod: not probed` });
    assert.equal(nodeHits, 0);
  });

  it('leaves pods on the pod network alone: any port may be probed, as the kubelet does', async () => {
    const req = buildRequest(http(node.port), pod(false), 'agent', guard);
    assert.deepEqual(await prober((req as Extract<typeof req, { type: 'httpGet' }>).request), { kind: 'success', output: 'node secret' });
  });
});
