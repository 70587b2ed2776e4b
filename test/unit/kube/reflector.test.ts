import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../../src/kernel/index.ts';
import { connectionFor, KubeClient, Reflector, projectPod } from '../../../src/kube/index.ts';
import type { Pod, RawObject, ReflectorSignal, StoreEvent } from '../../../src/kube/index.ts';
import { httpServer } from '../../support/loopback.ts';
import type { Listening } from '../../support/loopback.ts';

/**
 * The pod reflector against a loopback HTTP server speaking the list/watch
 * protocol (paginated LIST, then a chunked WATCH of JSON lines). The server
 * slips in pods the conversion cannot read, between good ones, and resends
 * the same events on every rewatch from a stale resourceVersion, as the API
 * server would.
 */
const pod = (name: string, rv: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  metadata: { namespace: 'shop', name, uid: `uid-${name}`, resourceVersion: rv },
  spec: { containers: [{ name: 'web', ports: [{ name: 'http', containerPort: 8080 }] }] },
  status: { phase: 'Running', podIP: '10.0.0.1' },
  ...extra,
});
/** Hostile shapes, which made projectPod throw before it read every field defensively. */
const hostile = {
  notAList: { spec: { containers: 'web' } },
  nullContainer: { spec: { containers: [null] } },
  env: { spec: { containers: [{ name: 'web', env: 5 }] } },
  statuses: { status: { containerStatuses: { 0: {} } } },
};
/**
 * The reflector must survive a conversion that throws whatever the input:
 * this one throws on objects marked `unreadable` (and reads the rest with projectPod).
 */
const project = (raw: RawObject): Pod => {
  if (raw['unreadable'] === true) throw new TypeError('cannot read this pod');
  return projectPod(raw);
};
const bad = {
  notAList: (rv: string) => pod('bad-list', rv, { unreadable: true }),
  nullContainer: (rv: string) => pod('bad-null', rv, { unreadable: true }),
  env: (rv: string) => pod('bad-env', rv, { unreadable: true }),
  statuses: (rv: string) => pod('bad-status', rv, { unreadable: true }),
};

interface Seen {
  readonly watches: string[];
  lists: number;
}

function apiServer(seen: Seen): (req: { url?: string | undefined }, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.searchParams.get('watch') === null) {
      seen.lists++;
      const pageTwo = url.searchParams.get('continue') === 'p2';
      const items = pageTwo ? [bad.nullContainer('8'), pod('c', '9')] : [pod('a', '5'), bad.notAList('6'), pod('b', '7')];
      res.end(JSON.stringify({ metadata: { resourceVersion: '10', ...(pageTwo ? {} : { continue: 'p2' }) }, items }));
      return;
    }
    const from = url.searchParams.get('resourceVersion') ?? '';
    seen.watches.push(from);
    const events = [
      { type: 'ADDED', object: pod('d', '11') },
      { type: 'ADDED', object: bad.env('12') },
      { type: 'MODIFIED', object: bad.statuses('13') },
      { type: 'MODIFIED', object: pod('a', '14', { unreadable: true }) }, // a known pod turns unreadable
      { type: 'ADDED', object: pod('e', '15') },
    ].filter((e) => Number(e.object['metadata'] !== undefined ? (e.object['metadata'] as { resourceVersion: string }).resourceVersion : 0) > Number(from));
    res.write(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
    // Then hold the watch open, as the API server does until timeoutSeconds.
  };
}

describe('Reflector with objects the conversion cannot read', () => {
  let api: Listening;
  const seen: Seen = { watches: [], lists: 0 };
  before(async () => {
    api = await httpServer(apiServer(seen));
  });
  after(async () => {
    await api.close();
  });

  it('skips and reports each bad object in LIST pages and WATCH events, keeps watching, and moves the resourceVersion past them', async () => {
    const client = new KubeClient({
      connection: connectionFor({ server: `http://127.0.0.1:${api.port}`, namespace: 'shop' }),
      clock: systemClock,
      random: () => 0.5,
    });
    const events: StoreEvent<Pod>[] = [];
    const signals: ReflectorSignal[] = [];
    const reflector = new Reflector<Pod>({
      client,
      clock: systemClock,
      random: () => 0.5,
      path: '/api/v1/pods',
      pageSize: 3,
      project,
      onEvent: (e) => events.push(e),
      onSignal: (s) => signals.push(s),
    });
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    const deadline = performance.now() + 5000;
    while (reflector.resourceVersion !== '15' && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    stop.abort();
    await running;
    await client.close();

    assert.equal(reflector.resourceVersion, '15');
    assert.deepEqual([...reflector.store.keys()].sort(), ['shop/b', 'shop/c', 'shop/d', 'shop/e']);
    assert.deepEqual(events.map((e) => `${e.type} ${e.key}`), ['ADDED shop/a', 'ADDED shop/b', 'ADDED shop/c', 'ADDED shop/d', 'DELETED shop/a', 'ADDED shop/e']);
    assert.equal(seen.lists, 2, 'one LIST of two pages, never failed and retried');
    assert.deepEqual(seen.watches, ['10'], 'one watch, never broken off and restarted');
    const skipped = signals.filter((s) => s.kind === 'skipped');
    assert.deepEqual(skipped.map((s) => s.object), ['bad-list', 'bad-null', 'bad-env', 'bad-status', 'a'].map((n) => ({ namespace: 'shop', name: n, uid: `uid-${n}` })));
    assert.ok(skipped.every((s) => s.error instanceof Error));
    assert.deepEqual(signals.filter((s) => s.kind === 'error'), []);
  });
});

describe('projectPod with hostile field types', () => {
  it('reads a wrong type as absent instead of throwing', () => {
    for (const [name, extra] of Object.entries(hostile)) {
      const p = projectPod(pod(name, '1', extra));
      assert.equal(p.uid, `uid-${name}`);
    }
    assert.deepEqual(projectPod(pod('x', '1', hostile.notAList)).containers, []);
    assert.deepEqual(projectPod(pod('x', '1', hostile.nullContainer)).containers.map((c) => [c.name, c.ports.length]), [['', 0]]);
    assert.deepEqual({ ...projectPod(pod('x', '1', hostile.env)).containers[0]?.env }, {});
    assert.deepEqual(projectPod(pod('x', '1', hostile.statuses)).containerStatuses, []);
    const odd = projectPod({
      metadata: { name: 7, namespace: ['a'], uid: 'u', labels: { app: 'web', n: 1, __proto__: 'x' }, deletionTimestamp: 5 },
      spec: { containers: [{ name: 'web', ports: [{ containerPort: '80' }, null], env: [{ name: '__proto__', value: 'p' }, { name: 'A', value: 1 }] }], readinessGates: 'gate' },
      status: { phase: 3, podIP: { ip: '10.0.0.1' }, conditions: [null, { type: 'Ready', status: true }] },
    } as unknown as RawObject);
    const c0 = odd.containers[0]!;
    assert.deepEqual(
      { name: odd.name, namespace: odd.namespace, labels: { ...odd.labels }, deletionTimestamp: odd.deletionTimestamp, gates: odd.readinessGates, phase: odd.phase, podIP: odd.podIP },
      { name: '', namespace: '', labels: { app: 'web' }, deletionTimestamp: undefined, gates: [], phase: 'Unknown', podIP: undefined },
    );
    assert.deepEqual(c0.ports, [{ name: undefined, containerPort: 0 }, { name: undefined, containerPort: 0 }]);
    assert.equal(Object.getPrototypeOf(c0.env), null);
    assert.deepEqual(Object.keys(c0.env), ['__proto__']);
    assert.deepEqual(odd.conditions.map((c) => [c.type, c.status]), [['', 'Unknown'], ['Ready', 'Unknown']]);
  });
});

describe('Reflector: a large LIST never holds the event loop (issue 31, ADR 0066)', () => {
  it('applies each page in slices of at most sliceMs, between which timers and I/O run', async () => {
    const { FakeClock } = await import('../../support/fake-clock.ts');
    const clock = new FakeClock(0);
    const perPage = 100;
    const pages = 3;
    const pageOf = (n: number): Record<string, unknown> => ({
      metadata: { resourceVersion: '10', ...(n + 1 < pages ? { continue: String(n + 1) } : {}) },
      items: Array.from({ length: perPage }, (_, i) => pod(`p${n * perPage + i}`, '5')),
    });
    // Pages answered at once (as a fast server's would be); the watch stays open until stopped.
    const client = {
      request: (o: { readonly query?: Record<string, unknown> }) => Promise.resolve(pageOf(Number(o.query?.['continue'] ?? 0))),
      stream: async function* (_path: string, _query: unknown, signal: AbortSignal): AsyncGenerator<RawObject> {
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        yield* [];
      },
    } as unknown as KubeClient;
    const timeline: string[] = [];
    let listing = true;
    const turns = (): void => {
      timeline.push('turn');
      if (listing) setImmediate(turns);
    };
    setImmediate(turns);
    const reflector = new Reflector<Pod>({
      client,
      clock,
      random: () => 0.5,
      path: '/api/v1/pods',
      sliceMs: 20,
      // Each object costs 1 ms of the loop's time.
      project: (raw) => {
        clock.advance(1);
        return projectPod(raw);
      },
      onEvent: (e) => timeline.push(e.type),
      onSynced: () => {
        listing = false;
      },
    });
    const stop = new AbortController();
    const running = reflector.run(stop.signal);
    while (listing) await new Promise((r) => setImmediate(r));
    stop.abort();
    await running;
    assert.equal(reflector.store.size, pages * perPage);
    let run = 0;
    let longest = 0;
    for (const entry of timeline) {
      run = entry === 'turn' ? 0 : run + 1;
      longest = Math.max(longest, run);
    }
    // 20 ms of 1 ms objects (plus the one that found the slice spent): on the old reflector all 300 in one turn.
    assert.ok(longest <= 21, `${longest} objects applied without the loop turning`);
    assert.equal(timeline.filter((e) => e === 'ADDED').length, pages * perPage);
  });
});
