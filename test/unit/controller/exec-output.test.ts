import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { WebSocketServer } from 'ws';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { RemediationRequest } from '../../../src/controller/remediation.ts';
import { reporter } from '../../../src/controller/report.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod } from '../../../src/kube/index.ts';
import { EventRecorder, Metrics, createLogger } from '../../../src/observability/index.ts';
import type { ProbePolicy, ProbeSpec } from '../../../src/policy/index.ts';
import { Scheduler, createExecProber } from '../../../src/probing/index.ts';
import { AddressGuard } from '../../../src/targets/index.ts';
import { GateWriter } from '../../../src/writeback/index.ts';
import type { GateCondition, GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

/**
 * Issue #10 finding 3, end to end inside the controller: an exec probe that
 * prints the controller's service-account token and exits 1 (the
 * reproduction published it in a pod Event). The exec prober runs against a
 * loopback server speaking the pods/exec WebSocket protocol, as main.ts wires
 * it (no --publish-exec-output); the Events, the readiness condition, the
 * remediation request and every log line must carry only the size.
 */
const token = 'eyJhbGciOiJSUzI1NiJ9.TOKEN-SECRET-PAYLOAD';
const gate = 'outprobe.io/web';

const exec: ProbeSpec = {
  handler: { type: 'exec', command: ['sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token; exit 1'] },
  initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 1, terminationGracePeriodSeconds: null,
};

const policy: ProbePolicy = {
  metadata: { name: 'web', namespace: 'shop', uid: 'p1' },
  spec: {
    selector: { matchLabels: { app: 'web' }, matchExpressions: [] },
    mode: 'Enforce',
    readiness: { conditionType: gate, container: null, probe: exec, maxUnreadyPercent: 100 },
    liveness: { action: 'Evict', container: null, probe: exec },
    startup: null,
    remediation: { maxUnavailable: 1, haltAbovePercentFailing: 100 },
  },
};

const pod: Pod = {
  uid: 'uid-1', namespace: 'shop', name: 'web-1', resourceVersion: '1', labels: { app: 'web' }, nodeName: 'n1', phase: 'Running', podIP: '127.0.10.1',
  deletionTimestamp: undefined, restartPolicy: 'Always', terminationGracePeriodSeconds: 30, hostNetwork: false, readinessGates: [gate],
  containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
  containerStatuses: [{ name: 'web', containerId: 'containerd://c1', restartCount: 0, state: 'running', startedAt: 1_699_999_000_000, started: true, ready: true }],
  conditions: [{ type: gate, status: 'True', reason: 'ProbeSucceeded', message: undefined, lastTransitionTime: undefined }],
};

void describe('exec probe output never reaches Events, conditions or logs by default', () => {
  let wss: WebSocketServer;
  let server: string;
  const dispatcher = new Agent();
  before(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => 'v5.channel.k8s.io' });
    wss.on('connection', (ws) => {
      ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(token)]));
      ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify({ status: 'Failure', reason: 'NonZeroExitCode', message: 'command terminated with non-zero exit code: exit code 1' }))]));
      ws.close();
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    server = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    await dispatcher.close();
  });

  void it('withholds the token from the pod Events, the gate condition, the remediation request and the logs', async () => {
    const clock = new FakeClock();
    const logStream = new PassThrough();
    const logLines: string[] = [];
    logStream.on('data', (chunk: Buffer) => logLines.push(chunk.toString('utf8')));
    const log = createLogger({ level: 'debug', stream: logStream, clock });
    const eventBodies: unknown[] = [];
    const events = new EventRecorder({ api: { request: (o) => (eventBodies.push(o.body), Promise.resolve({} as never)) }, clock, random: () => 0.5, logger: log, reportingInstance: 'test' });
    const observe = reporter({ log, metrics: new Metrics({ defaultMetrics: false }), events });
    const writes: GateCondition[] = [];
    const gates = new GateWriter({ clock, patch: (_p, condition) => (writes.push(condition), Promise.resolve<GatePatchResult>({ resourceVersion: '2' })) });
    const run = createExecProber({ server, dispatcher });
    const probers: Probers = {
      httpGet: () => Promise.reject(new Error('unused')),
      tcpSocket: () => Promise.reject(new Error('unused')),
      grpc: () => Promise.reject(new Error('unused')),
      exec: (p, container, command, timeoutMs, signal) => run({ namespace: p.namespace, pod: p.name, container, command, timeoutMs }, signal),
    };
    const remediations: RemediationRequest[] = [];
    const entry: PolicyEntry = { key: 'shop/web', namespace: 'shop', name: 'web', uid: 'p1', generation: 1, policy, issues: [], stored: undefined };
    const pods = new Map([['shop/web-1', pod]]);
    const scheduler = new Scheduler({ clock, random: () => 0, concurrency: 4 });
    const set = new TargetSet({
      clock, observe, scheduler, gates, guard: new AddressGuard(['127.0.0.0/8']), probers,
      policies: new Map([['shop/web', entry]]), pods, remediate: (r) => remediations.push(r), owns: () => true, spread: (_k, _p, now) => now, // first passes at once
    });
    set.onPod('ADDED', pod, undefined);
    // The probes go over real loopback sockets: step the scheduler and wait in real time until both verdicts are in.
    const deadline = Date.now() + 10_000;
    while ((writes.length === 0 || remediations.length === 0) && Date.now() < deadline) {
      scheduler.step();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await events.flush();

    assert.equal(writes.length, 1, 'the readiness condition went False');
    assert.equal(writes[0]?.message, 'Readiness probe failed: exec probe output withheld (41 bytes)');
    assert.equal(remediations[0]?.output, 'exec probe output withheld (41 bytes)');
    const messages = eventBodies.map((b) => (b as { message?: string }).message ?? '');
    assert.ok(messages.includes('Liveness probe failed: exec probe output withheld (41 bytes)'), messages.join('\n'));
    const published = [...writes.map((w) => w.message), ...eventBodies.map((b) => JSON.stringify(b)), ...logLines, ...remediations.map((r) => r.output)];
    assert.deepEqual(published.filter((text) => text.includes('TOKEN-SECRET')), [], 'the token appears nowhere');
  });
});
