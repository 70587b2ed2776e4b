import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conditionWriter } from '../../../src/controller/conditions.ts';
import type { PolicyEntry } from '../../../src/controller/policies.ts';
import type { Remediator } from '../../../src/controller/remediation.ts';
import type { Probers } from '../../../src/controller/runner.ts';
import { TargetSet } from '../../../src/controller/target-set.ts';
import type { Pod, PodCondition } from '../../../src/kube/index.ts';
import type { ProbePolicy, ProbeSpec } from '../../../src/policy/index.ts';
import { Scheduler } from '../../../src/probing/index.ts';
import type { Outcome } from '../../../src/probing/index.ts';
import { AddressGuard, planTargets, selects } from '../../../src/targets/index.ts';
import { GateWriter, budgetCountsOf } from '../../../src/writeback/index.ts';
import type { GatePatchResult } from '../../../src/writeback/index.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { decideDivergence } from '../../../src/divergence/index.ts';
import { confirmedResult } from '../../../src/results/index.ts';

/**
 * Property: the per-policy counts the target set keeps as pods, targets and
 * policies change (issue 18) equal a full scan of every pod and target (the
 * computation they replaced), after any sequence of pod adds, updates,
 * deletes and recreations, ownership changes, policy creates, spec edits,
 * status-only updates and deletes, and probe passes that succeed, fail or
 * error.
 */

/** mulberry32: a small seeded PRNG, so a failing seed can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const probe = (failureThreshold: number): ProbeSpec => ({
  handler: { type: 'httpGet', path: '/', port: 8080, scheme: 'HTTP', httpHeaders: [] },
  initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 1, successThreshold: 1, failureThreshold, terminationGracePeriodSeconds: null,
});

const gates = ['outprobe.io/g1', 'outprobe.io/g2'] as const;

function randomPolicy(r: () => number, namespace: string, name: string): ProbePolicy {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const container = pick([null, 'web', 'missing']);
  return {
    metadata: { name, namespace },
    spec: {
      selector: { matchLabels: r() < 0.2 ? {} : { app: pick(['a', 'b']) }, matchExpressions: [] },
      mode: r() < 0.8 ? 'Enforce' : 'Observe',
      readiness: r() < 0.8 ? { conditionType: pick(gates), container, maxUnreadyPercent: 100, probe: probe(pick([1, 2])) } : null,
      liveness: r() < 0.6 ? { action: 'Evict', container: pick([null, 'web']), probe: probe(pick([1, 2])) } : null,
      startup: null,
      remediation: { maxUnavailable: 1, haltAbovePercentFailing: 50 },
    },
  };
}

function randomPod(r: () => number, namespace: string, name: string, uid: string): Pod {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const conditions: PodCondition[] = [{ type: 'ContainersReady', status: r() < 0.7 ? 'True' : 'False', reason: undefined, message: undefined, lastTransitionTime: undefined }];
  for (const type of gates) {
    if (r() < 0.4) continue;
    // Written by outprobe (one of its reasons) or by another writer.
    conditions.push({ type, status: pick(['True', 'False'] as const), reason: pick(['ProbeSucceeded', 'ProbeFailed', 'SomeoneElse']), message: undefined, lastTransitionTime: undefined });
  }
  if (r() < 0.3) conditions.push({ type: 'Ready', status: 'True', reason: undefined, message: undefined, lastTransitionTime: undefined });
  return {
    uid, namespace, name, resourceVersion: String(Math.floor(r() * 1e6)), labels: r() < 0.1 ? {} : { app: pick(['a', 'b']) }, nodeName: 'n1',
    phase: r() < 0.1 ? 'Succeeded' : 'Running', podIP: '127.0.10.1', deletionTimestamp: r() < 0.15 ? 1 : undefined, hostNetwork: false,
    restartPolicy: 'Always', terminationGracePeriodSeconds: 30, readinessGates: gates.filter(() => r() < 0.6),
    containers: [{ name: 'web', ports: [], env: {}, sidecar: false }],
    containerStatuses: [{ name: 'web', containerId: `containerd://${uid}`, restartCount: 0, state: 'running', startedAt: 1_600_000_000_000, started: true, ready: true }],
    conditions,
  };
}

const gateOf = (p: Pod, type: string): string | undefined => p.conditions.find((c) => c.type === type)?.status;
const kubeletReady = (p: Pod): boolean => gateOf(p, 'Ready') === 'True' || (gateOf(p, 'ContainersReady') === 'True' && p.readinessGates.every((g) => gateOf(p, g) === 'True'));

/** The counts as the controller computed them before issue 18: a scan of every pod and every target. */
function scan(set: TargetSet, pods: ReadonlyMap<string, Pod>, entry: PolicyEntry, owns: (p: Pod) => boolean) {
  const policy = entry.policy;
  if (policy === undefined) return { pods: 0, ready: 0, failing: 0, ungated: 0, erroring: 0, foreign: 0, diverged: 0, planIssues: [], budget: [], gated: null, panicFailing: null };
  const targets = [...set.all()].filter((t) => t.plan.policy === entry.key);
  const failing = (uid: string): boolean => targets.some((t) => t.plan.podUid === uid && t.plan.kind !== 'readiness' && t.state.committed === 'failure');
  const selected = [...pods.values()].filter((p) => selects(policy, p));
  const live = selected.filter((p) => p.deletionTimestamp === undefined);
  const gate = policy.spec.readiness?.conditionType;
  // One issue per (pod, policy): the last of its blocks'.
  const gated = gate === undefined || policy.spec.mode !== 'Enforce' ? null : targets.filter((t) => {
    const p = pods.get(t.plan.podKey);
    return t.plan.kind === 'readiness' && p !== undefined && p.deletionTimestamp === undefined && p.uid === t.plan.podUid && p.readinessGates.includes(gate) && owns(p) && conditionWriter(p.conditions, gate).by !== 'foreign';
  });
  const issueOf = (p: Pod): string[] =>
    owns(p) && p.phase !== 'Succeeded' && p.phase !== 'Failed' ? planTargets(policy, p).issues.slice(-1).map((i) => i.message) : [];
  return {
    pods: live.length,
    ready: live.filter((p) => gateOf(p, gate ?? 'Ready') === 'True').length,
    failing: live.filter((p) => failing(p.uid)).length,
    ungated: gate === undefined ? 0 : live.filter((p) => !p.readinessGates.includes(gate)).length,
    erroring: targets.filter((t) => (t.state.lastError?.consecutive ?? 0) > 0).length,
    foreign: gate === undefined || policy.spec.mode !== 'Enforce' ? 0 : live.filter((p) => p.readinessGates.includes(gate) && conditionWriter(p.conditions, gate).by === 'foreign').length,
    planIssues: live.flatMap(issueOf),
    // ADR 0023: the node's ContainersReady against the policy's confirmed readiness on the pod (conditions here carry no transition time: stable).
    diverged: live.filter((p) => {
      const t = targets.find((x) => x.plan.podUid === p.uid && x.plan.kind === 'readiness');
      const c = p.conditions.find((x) => x.type === 'ContainersReady');
      if (t === undefined || c === undefined) return false;
      return decideDivergence({ outside: confirmedResult(t.state), node: { status: c.status, since: undefined }, periodMs: 1000, now: 0 }).diverged;
    }).length,
    budget: selected.map((p) => ({ uid: p.uid, ready: p.deletionTimestamp === undefined && kubeletReady(p), failing: failing(p.uid), remediating: false })),
    // The panic threshold's gated pods, as its walk over the policy's readiness targets finds them.
    gated: gated === null ? null : gated.length,
    // Of those, the ones whose readiness probes confirm Failure (what the threshold holds or fails open).
    panicFailing: gated === null ? null : gated.filter((t) => confirmedResult(t.state) === 'failure').length,
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};

const remediator = { count: () => 0, halted: () => false } as unknown as Remediator;
const byUid = (a: { uid: string }, b: { uid: string }): number => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

async function run(seed: number, steps: number): Promise<void> {
  const r = prng(seed);
  const clock = new FakeClock();
  const scheduler = new Scheduler({ clock, random: r, concurrency: 8 });
  const writer = new GateWriter({ clock, patch: () => Promise.resolve<GatePatchResult>({ resourceVersion: '1' }) });
  const pods = new Map<string, Pod>();
  const policies = new Map<string, PolicyEntry>();
  const outcome = (): Promise<Outcome> => {
    const x = r();
    return Promise.resolve(x < 0.5 ? { kind: 'success', output: '' } : x < 0.85 ? { kind: 'failure', output: 'HTTP probe failed with statuscode: 503' } : { kind: 'errored', error: 'no route' });
  };
  const probers: Probers = { httpGet: outcome, tcpSocket: outcome, grpc: outcome };
  const unowned = new Set<string>();
  const owns = (p: Pod): boolean => !unowned.has(p.uid);
  const set = new TargetSet({ clock, observe: () => undefined, scheduler, gates: writer, guard: new AddressGuard(['127.0.0.0/8']), probers, policies, pods, remediate: () => undefined, owns });
  const namespaces = ['shop', 'other'];
  let uids = 0;
  let generation = 1;
  for (let step = 0; step < steps; step++) {
    const x = r();
    const ns = namespaces[r() < 0.8 ? 0 : 1] ?? 'shop';
    const key = `${ns}/p${Math.floor(r() * 8)}`;
    const old = pods.get(key);
    if (x < 0.35) {
      // A pod added or updated (an update keeps its uid, sometimes it is recreated under its name).
      const uid = old !== undefined && r() < 0.85 ? old.uid : `u${uids++}`;
      const pod = randomPod(r, ns, key.split('/')[1] ?? '', uid);
      pods.set(key, pod);
      set.onPod(old === undefined ? 'ADDED' : 'MODIFIED', pod, old);
    } else if (x < 0.45 && old !== undefined) {
      pods.delete(key);
      set.onPod('DELETED', old, old);
    } else if (x < 0.5 && old !== undefined) {
      // Shard membership changed: the controller re-plans every pod.
      if (unowned.has(old.uid)) unowned.delete(old.uid);
      else unowned.add(old.uid);
      for (const p of pods.values()) set.reconcilePod(p, undefined);
    } else if (x < 0.62) {
      // A policy created, or its spec edited (a new generation), sometimes invalid.
      const name = `pol${Math.floor(r() * 3)}`;
      const pk = `${ns}/${name}`;
      const policy = r() < 0.1 ? undefined : randomPolicy(r, ns, name);
      const entry: PolicyEntry = { key: pk, namespace: ns, name, uid: `uid-${pk}`, generation: generation++, created: `2026-01-0${1 + Math.floor(r() * 3)}T00:00:00Z`, policy, issues: [], stored: undefined };
      policies.set(pk, entry);
      set.policyChanged(entry);
    } else if (x < 0.68) {
      // A status-only update: the same spec in a new object, not replanned.
      const entry = [...policies.values()][Math.floor(r() * policies.size)];
      if (entry !== undefined) policies.set(entry.key, { ...entry, policy: entry.policy === undefined ? undefined : structuredClone(entry.policy) });
    } else if (x < 0.72) {
      const entry = [...policies.values()][Math.floor(r() * policies.size)];
      if (entry !== undefined) {
        policies.delete(entry.key);
        set.policyRemoved(entry);
      }
    } else {
      clock.advance(Math.floor(r() * 1500));
      scheduler.step();
      await flush();
    }
    set.panicStep(); // as every controller step does
    for (const entry of policies.values()) {
      const got = set.statusInput(entry, true, remediator);
      const want = scan(set, pods, entry, owns);
      const at = `seed ${seed} step ${step} policy ${entry.key}`;
      assert.deepEqual(
        { pods: got.pods, ready: got.ready, failing: got.failing, ungated: got.ungated, erroring: got.erroring, foreign: got.foreign ?? 0, diverged: got.diverged, planIssues: got.planIssues },
        { pods: want.pods, ready: want.ready, failing: want.failing, ungated: want.ungated, erroring: want.erroring, foreign: want.foreign, diverged: want.diverged, planIssues: want.planIssues },
        at,
      );
      assert.deepEqual(set.budgetPods(entry.key, () => false).sort(byUid), want.budget.sort(byUid), `${at} (budget)`);
      if (want.gated !== null) assert.equal(got.readinessPanic?.counts.gated, want.gated, `${at} (panic: gated)`);
      if (want.panicFailing !== null) assert.equal(got.readinessPanic?.counts.failing, want.panicFailing, `${at} (panic: failing)`);
      // The budget's counts (ADR 0031) equal those of the full list, for any candidate and pods being remediated.
      const listed = [...pods.values()].filter((p) => entry.policy !== undefined && selects(entry.policy, p));
      const remediating = new Map(listed.filter(() => r() < 0.2).map((p) => [p.uid, p.key ?? `${p.namespace}/${p.name}`] as const));
      if (r() < 0.3) remediating.set(`gone-${step}`, `${entry.namespace}/gone`);
      for (const candidate of [...listed.slice(0, 3), { uid: 'other', namespace: entry.namespace, name: 'other' }]) {
        const c = { uid: candidate.uid, podKey: `${candidate.namespace}/${candidate.name}` };
        const list = want.budget.map((b) => ({ ...b, remediating: remediating.has(b.uid) }));
        assert.deepEqual(set.budgetCounts(entry.key, c, remediating), budgetCountsOf(c.uid, list), `${at} (budget counts, candidate ${c.uid})`);
      }
    }
  }
}

describe('per-policy counts kept incrementally (issue 18)', () => {
  it('equal a full scan of pods and targets after random sequences of pod, target and policy events', async () => {
    for (let seed = 1; seed <= 40; seed++) await run(seed, 250);
  });
});
