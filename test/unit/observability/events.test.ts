import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestOptions } from '../../../src/kube/index.ts';
import { EventRecorder, eventBody, eventName, rfc3339, silentLogger, truncateMessage } from '../../../src/observability/index.ts';
import type { EventDropCause, EventMetrics, EventRecorderOptions, EventResultLabel, InvolvedObject } from '../../../src/observability/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';

// The recorder's HTTP path (create, merge-patch bump, 404 → create) is covered
// by the integration tests against a real kube-apiserver; these cover the
// pure pieces it is built from, and its queueing, folding and combining with
// a fake API and a fake clock.
describe('eventName', () => {
  it('is the object name, a dot and 16 hex chars from the random source', () => {
    const values = [0, 0.5, 0.999999999];
    let i = 0;
    const random = (): number => values[i++ % values.length] ?? 0;
    assert.equal(eventName('web-7d9c', random), 'web-7d9c.0000000080000000');
    assert.match(eventName('web-7d9c', random), /^web-7d9c\.[0-9a-f]{16}$/);
  });

  it('stays a valid DNS subdomain for a 253-character object name', () => {
    const name = eventName(`${'a'.repeat(235)}-${'b'.repeat(17)}`, () => 0.25);
    assert.ok(name.length <= 253, String(name.length));
    assert.match(name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.ok(!name.includes('-.'));
  });
});

describe('rfc3339', () => {
  it('writes seconds precision in UTC, as metav1.Time does', () => {
    assert.equal(rfc3339(Date.UTC(2025, 5, 1, 12, 30, 45, 999)), '2025-06-01T12:30:45Z');
  });
});

describe('truncateMessage', () => {
  it('keeps messages up to 1024 characters and cuts longer ones to 1024', () => {
    assert.equal(truncateMessage('x'.repeat(1024)).length, 1024);
    const cut = truncateMessage('y'.repeat(5000));
    assert.equal(cut.length, 1024);
    assert.ok(cut.endsWith('...'));
  });
});

describe('eventBody', () => {
  it('is a core/v1 Event naming outprobe as source and reporting component', () => {
    const object = { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web-1', uid: 'u-1' } as const;
    const body = eventBody({ name: 'web-1.00000000000000ff', object, type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', count: 2, firstMs: Date.UTC(2025, 0, 1), lastMs: Date.UTC(2025, 0, 1, 0, 0, 10) }, 'outprobe-0');
    assert.deepEqual(body, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web-1.00000000000000ff', namespace: 'shop' },
      involvedObject: { kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: 'web-1', uid: 'u-1' },
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
      source: { component: 'outprobe' },
      reportingComponent: 'outprobe.io/controller',
      reportingInstance: 'outprobe-0',
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:00:10Z',
      count: 2,
    });
  });
});

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly done: (err?: Error) => void;
}

/** An EventApi whose calls stay in flight until the test settles them (or settle at once with `auto`). */
class FakeEventApi {
  readonly calls: Call[] = [];
  inFlight = 0;
  maxInFlight = 0;
  auto = false;
  request<T>(o: RequestOptions): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<T>((resolve, reject) => {
      const done = (err?: Error): void => {
        this.inFlight--;
        if (err === undefined) resolve({} as T);
        else reject(err);
      };
      this.calls.push({ method: o.method, path: o.path, body: o.body as Record<string, unknown>, done });
      if (this.auto) done();
    });
  }

  /** Settles every call in flight, repeatedly, until none is left. */
  async drain(): Promise<void> {
    for (;;) {
      await settle();
      const open = this.calls.filter((c) => !settled.has(c));
      if (open.length === 0) return;
      for (const c of open) {
        settled.add(c);
        c.done();
      }
    }
  }
}
const settled = new WeakSet<Call>();

class CountingMetrics implements EventMetrics {
  readonly results = new Map<string, number>();
  readonly dropped = new Map<string, number>();
  readonly folded = new Map<string, number>();
  recordEvent(result: EventResultLabel): void {
    this.results.set(result, (this.results.get(result) ?? 0) + 1);
  }
  recordEventDropped(reason: string, cause: EventDropCause): void {
    this.dropped.set(`${reason}/${cause}`, (this.dropped.get(`${reason}/${cause}`) ?? 0) + 1);
  }
  recordEventFolded(reason: string): void {
    this.folded.set(reason, (this.folded.get(reason) ?? 0) + 1);
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

const policy: InvolvedObject = { kind: 'ProbePolicy', apiVersion: 'outprobe.io/v1alpha1', namespace: 'shop', name: 'web', uid: 'p-1' };
const fold = { into: policy, reason: 'ReadinessGateChangesFolded', what: 'gate changes' };
const pod = (i: number): InvolvedObject => ({ kind: 'Pod', apiVersion: 'v1', namespace: 'shop', name: `web-${i}`, uid: `u-${i}` });

describe('EventRecorder', () => {
  function recorder(api: FakeEventApi, clock: FakeClock, metrics: CountingMetrics, extra: Partial<EventRecorderOptions> = {}): EventRecorder {
    let n = 0;
    return new EventRecorder({ api, clock, random: () => ((n++ % 997) + 0.5) / 1000, logger: silentLogger, metrics, reportingInstance: 'test', ...extra });
  }

  it('a burst of 2,000 gate changes: at most `concurrency` writes in flight, the rest beyond the queue folded into one summary Event on the policy that accounts for every one', async () => {
    const api = new FakeEventApi();
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics, { queueSize: 1000, concurrency: 8, foldIntervalMs: 30_000 });
    for (let i = 0; i < 2000; i++) events.record(pod(i), 'Normal', 'ReadinessGateChanged', 'Set condition outprobe.io/web to True: ', fold);
    await settle();
    assert.equal(api.inFlight, 8);
    await api.drain();
    assert.equal(api.maxInFlight, 8);
    const podEvents = api.calls.filter((c) => (c.body['involvedObject'] as { kind: string }).kind === 'Pod');
    const dropped = metrics.dropped.get('ReadinessGateChanged/queue_full') ?? 0;
    assert.equal(podEvents.length + dropped, 2000);
    assert.equal(podEvents.length, 1000, 'the queue holds 1,000 (its workers start after the recording turn)');
    assert.equal(metrics.folded.get('ReadinessGateChanged'), dropped);
    assert.equal(api.calls.some((c) => c.body['reason'] === 'ReadinessGateChangesFolded'), false, 'the summary waits for its interval');
    clock.advance(30_000);
    await api.drain();
    const summaries = api.calls.filter((c) => c.body['reason'] === 'ReadinessGateChangesFolded');
    assert.equal(summaries.length, 1);
    const s = summaries[0]?.body ?? {};
    assert.deepEqual(s['involvedObject'], { kind: 'ProbePolicy', apiVersion: 'outprobe.io/v1alpha1', namespace: 'shop', name: 'web', uid: 'p-1' });
    assert.equal(s['type'], 'Normal');
    assert.equal(s['message'], `${dropped} gate changes on ${dropped} pods were not sent as Events in the last 30s (outprobe's Event rate limit); each pod's own status shows its current state`);
    assert.equal(metrics.results.get('created'), 1001);
  });

  it('without a fold target a dropped event is only counted', async () => {
    const api = new FakeEventApi();
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics, { queueSize: 2, concurrency: 1 });
    for (let i = 0; i < 5; i++) events.record(pod(i), 'Warning', 'Unhealthy', 'Readiness probe failed: x');
    await api.drain();
    assert.equal(api.calls.length, 2);
    assert.equal(metrics.dropped.get('Unhealthy/queue_full'), 3);
    assert.equal(metrics.folded.size, 0);
    clock.advance(60_000);
    await api.drain();
    assert.equal(api.calls.length, 2);
  });

  it('combines similar events as client-go does: from the 10th distinct message on, one "(combined from similar events)" Event whose count rises', async () => {
    const api = new FakeEventApi();
    api.auto = true;
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics);
    for (let i = 1; i <= 12; i++) {
      events.record(pod(1), 'Normal', 'ReadinessGateChanged', `Set condition outprobe.io/web to ${i % 2 === 0 ? 'True' : 'False'}: attempt ${i}`);
      await settle();
      clock.advance(1000);
    }
    await events.flush();
    const creates = api.calls.filter((c) => c.method === 'POST');
    const patches = api.calls.filter((c) => c.method === 'PATCH');
    assert.equal(creates.length, 10);
    assert.equal(creates[9]?.body['message'], '(combined from similar events): Set condition outprobe.io/web to True: attempt 10');
    assert.equal(patches.length, 2);
    assert.equal(patches[1]?.path, `/api/v1/namespaces/shop/events/${(creates[9].body['metadata'] as { name: string }).name}`);
    assert.deepEqual(patches[1].body, { count: 3, lastTimestamp: rfc3339(clock.now() - 1000), message: '(combined from similar events): Set condition outprobe.io/web to True: attempt 12' });
  });

  it('a repeat while the create is in flight is patched after it (never before it, which would 404)', async () => {
    const api = new FakeEventApi();
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics);
    events.record(pod(1), 'Warning', 'Unhealthy', 'Readiness probe failed: 503');
    await settle();
    assert.equal(api.calls.length, 1);
    events.record(pod(1), 'Warning', 'Unhealthy', 'Readiness probe failed: 503');
    events.record(pod(1), 'Warning', 'Unhealthy', 'Readiness probe failed: 503');
    await settle();
    assert.equal(api.calls.length, 1, 'nothing sent while the create is in flight');
    await api.drain();
    assert.deepEqual(api.calls.map((c) => c.method), ['POST', 'PATCH']);
    assert.equal(api.calls[1]?.body['count'], 3);
  });

  it('a failed gate-change Event is folded too, and close() writes the open summary and folds what is still queued', async () => {
    const api = new FakeEventApi();
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics, { concurrency: 1 });
    for (let i = 0; i < 4; i++) events.record(pod(i), 'Normal', 'ReadinessGateChanged', 'Set condition outprobe.io/web to False: x', fold);
    await settle();
    api.calls[0]?.done(new Error('connection reset'));
    settled.add(api.calls[0] as Call);
    await settle();
    assert.equal(api.calls.length, 2);
    const closed = events.close();
    await api.drain();
    await closed;
    assert.equal(metrics.dropped.get('ReadinessGateChanged/failed'), 1);
    assert.equal(metrics.dropped.get('ReadinessGateChanged/shutdown'), 2);
    const summary = api.calls.find((c) => c.body['reason'] === 'ReadinessGateChangesFolded');
    assert.match(String(summary?.body['message']), /^3 gate changes on 3 pods were not sent as Events in the last 1s/);
  });

  it('close() writes a summary that was still queued behind the writes in flight', async () => {
    const api = new FakeEventApi();
    const clock = new FakeClock();
    const metrics = new CountingMetrics();
    const events = recorder(api, clock, metrics, { queueSize: 1, concurrency: 1, foldIntervalMs: 1000 });
    for (let i = 0; i < 3; i++) events.record(pod(i), 'Normal', 'ReadinessGateChanged', 'Set condition outprobe.io/web to True: ', fold);
    await settle(); // pod 0 in flight, pods 1 and 2 folded
    clock.advance(1000); // the summary is queued, waiting for the only worker
    await settle();
    assert.equal(api.calls.length, 1);
    const closed = events.close();
    await api.drain();
    await closed;
    const summary = api.calls.find((c) => c.body['reason'] === 'ReadinessGateChangesFolded');
    assert.match(String(summary?.body['message']), /^2 gate changes on 2 pods /);
  });
});
