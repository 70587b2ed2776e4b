import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failure, success } from '../../../src/probing/outcome.ts';
import { containerStarted, decideContainer, reconfigure, record } from '../../../src/results/index.ts';
import type { ContainerDecisions, ContainerTargets, ContainerView, TargetState } from '../../../src/results/index.ts';
import { T0, pod, running, target } from './support.ts';

const S = success('');
const F = failure('connection refused');

function all(withStartup = true): ContainerTargets {
  return {
    startup: withStartup ? target('startup', { config: { failureThreshold: 30 } }) : null,
    liveness: target('liveness'),
    readiness: target('readiness'),
  };
}

function step(targets: ContainerTargets, container: ContainerView | undefined, now = T0): ContainerDecisions {
  return decideContainer(targets, { pod: pod(), container }, now);
}

/** The targets after a pass, recording `outcome` for every target told to probe. */
function after(decisions: ContainerDecisions, outcome = S, now = T0): ContainerTargets {
  const next = (d: ContainerDecisions['startup']): TargetState | null => {
    if (d === null) return null;
    return d.action === 'probe' ? record(d.state, outcome, now).state : d.state;
  };
  return { startup: next(decisions.startup), liveness: next(decisions.liveness), readiness: next(decisions.readiness) };
}

void describe('containerStarted', () => {
  const startupSucceeded = record(step(all(), running()).startup!.state, S, T0).state;

  void it('without a startup probe, a running container counts as started', () => {
    assert.equal(containerStarted(running(), null), true);
  });

  void it('is false for a missing, ID-less, waiting or terminated container', () => {
    assert.equal(containerStarted(undefined, null), false);
    assert.equal(containerStarted(running({ containerId: '' }), null), false);
    assert.equal(containerStarted(running({ state: 'waiting' }), null), false);
    assert.equal(containerStarted(running({ state: 'terminated' }), null), false);
  });

  void it('needs a committed startup Success for this very instance', () => {
    assert.equal(containerStarted(running(), step(all(), running()).startup!.state), false);
    assert.equal(containerStarted(running(), startupSucceeded), true);
    assert.equal(containerStarted(running({ restartCount: 1 }), startupSucceeded), false);
    assert.equal(containerStarted(running({ containerId: 'containerd://b' }), startupSucceeded), false);
  });

  void it("the kubelet's started: false blocks; undefined does not", () => {
    assert.equal(containerStarted(running({ started: false }), null), false);
    assert.equal(containerStarted(running({ started: false }), startupSucceeded), false);
    assert.equal(containerStarted(running({ started: undefined }), null), true);
    assert.equal(containerStarted(running({ started: true }), startupSucceeded), true);
  });
});

void describe('decideContainer: startup gating (§3.6)', () => {
  void it('liveness and readiness skip until startup commits Success, then probe', () => {
    let targets = all();
    for (let i = 0; i < 5; i++) {
      const decisions = step(targets, running(), T0 + i * 10_000);
      assert.equal(decisions.started, false);
      assert.equal(decisions.startup?.action, 'probe');
      assert.equal(decisions.liveness?.reason, 'not-started');
      assert.equal(decisions.readiness?.reason, 'not-started');
      targets = after(decisions, F, T0 + i * 10_000);
    }
    // Readiness stayed at its initial Failure, liveness at its initial Success.
    assert.equal(targets.readiness?.committed, 'failure');
    assert.equal(targets.liveness?.committed, 'success');
    targets = after(step(targets, running(), T0 + 50_000), S);
    assert.equal(targets.startup?.committed, 'success');
    const decisions = step(targets, running(), T0 + 60_000);
    assert.equal(decisions.started, true);
    assert.equal(decisions.startup?.reason, 'on-hold');
    assert.equal(decisions.liveness?.action, 'probe');
    assert.equal(decisions.readiness?.action, 'probe');
  });

  void it('readiness emits only its initial Failure while gated', () => {
    let targets = all();
    const emitted: unknown[] = [];
    for (let i = 0; i < 10; i++) {
      const decisions = step(targets, running(), T0 + i * 10_000);
      if (decisions.readiness?.emitted) emitted.push(decisions.readiness.emitted.to);
      targets = after(decisions, F);
    }
    assert.deepEqual(emitted, ['failure']);
  });

  void it('with no startup probe, a running container is started at once', () => {
    const decisions = step(all(false), running());
    assert.equal(decisions.started, true);
    assert.equal(decisions.startup, null);
    assert.equal(decisions.liveness?.action, 'probe');
    assert.equal(decisions.readiness?.action, 'probe');
  });

  void it("the kubelet's started: false blocks liveness and readiness even without a startup probe", () => {
    const decisions = step(all(false), running({ started: false }));
    assert.equal(decisions.liveness?.reason, 'not-started');
    assert.equal(decisions.readiness?.reason, 'not-started');
  });

  void it("the kubelet's started: false blocks even after outprobe's startup succeeded", () => {
    const targets = after(step(all(), running({ started: false })), S);
    const decisions = step(targets, running({ started: false }));
    assert.equal(decisions.started, false);
    assert.equal(decisions.liveness?.reason, 'not-started');
  });

  void it('a new instance resets startup to Unknown and gates again', () => {
    const started = after(step(all(), running()), S);
    assert.equal(step(started, running()).started, true);
    const decisions = step(started, running({ restartCount: 1 }));
    assert.equal(decisions.started, false);
    assert.equal(decisions.startup?.state.committed, 'unknown');
    assert.equal(decisions.startup.action, 'probe');
    assert.equal(decisions.liveness?.reason, 'not-started');
  });

  void it('a startup target does nothing once started (seeded Success)', () => {
    const targets = { ...all(), startup: target('startup', { seed: { value: 'success' } }) };
    const decisions = step(targets, running());
    assert.equal(decisions.startup?.reason, 'already-started');
    assert.equal(decisions.started, true);
    assert.equal(decisions.liveness?.action, 'probe');
  });

  void it('a startup Failure holds and keeps the container unstarted', () => {
    let targets: ContainerTargets = { ...all(), startup: target('startup', { config: { failureThreshold: 2 } }) };
    targets = after(step(targets, running()), F);
    assert.equal(targets.startup?.committed, 'unknown');
    targets = after(step(targets, running()), F);
    assert.equal(targets.startup?.committed, 'failure');
    const decisions = step(targets, running());
    assert.equal(decisions.startup?.reason, 'on-hold');
    assert.equal(decisions.started, false);
    assert.equal(decisions.liveness?.reason, 'not-started');
  });
});

void describe('probeNow (§3.6 improvement)', () => {
  void it('a new pod: the instance appears after no-container, readiness probes now, once', () => {
    let targets = all(false);
    const first = step(targets, running({ containerId: '', state: 'waiting' }));
    assert.equal(first.readiness?.reason, 'no-container');
    targets = after(first);
    const appeared = step(targets, running());
    assert.equal(appeared.readiness?.action, 'probe');
    assert.equal(appeared.readiness.probeNow, true);
    assert.equal(appeared.liveness?.probeNow, false);
    targets = after(appeared);
    for (let i = 1; i <= 20; i++) {
      const decisions = step(targets, running(), T0 + i * 10_000);
      assert.equal(decisions.readiness?.probeNow, false);
      targets = after(decisions, i % 2 === 0 ? S : F);
    }
  });

  void it('not raised when a target first sees a container already started', () => {
    assert.equal(step(all(false), running()).readiness?.probeNow, false);
  });

  void it('raised when the container becomes started (startup commits Success)', () => {
    let targets = after(step(all(), running()), F);
    targets = after(step(targets, running()), S);
    const decisions = step(targets, running());
    assert.equal(decisions.readiness?.probeNow, true);
    assert.equal(decisions.liveness?.probeNow, false);
    assert.equal(step(after(decisions), running()).readiness?.probeNow, false);
  });

  void it("raised when the kubelet's started flips to true", () => {
    const targets = after(step(all(false), running({ started: false })));
    const decisions = step(targets, running({ started: true }));
    assert.equal(decisions.readiness?.probeNow, true);
  });

  void it('raised for a new instance', () => {
    let targets = after(step(all(false), running()));
    targets = after(step(targets, running()));
    const decisions = step(targets, running({ containerId: 'containerd://b' }));
    assert.equal(decisions.readiness?.action, 'probe');
    assert.equal(decisions.readiness.probeNow, true);
  });

  void it('waits out the initial delay, then is raised on the first allowed probe', () => {
    const ready = record(step(all(false), running()).readiness!.state, S, T0).state;
    const targets: ContainerTargets = { startup: null, liveness: null, readiness: reconfigure(ready, { initialDelaySeconds: 10 }) };
    const restarted = running({ restartCount: 1, startedAt: T0 });
    const early = step(targets, restarted, T0 + 3_000);
    assert.equal(early.readiness?.reason, 'initial-delay');
    assert.equal(early.readiness.probeNow, false);
    const due = step(after(early), restarted, T0 + 10_000);
    assert.equal(due.readiness?.action, 'probe');
    assert.equal(due.readiness.probeNow, true);
  });
});
