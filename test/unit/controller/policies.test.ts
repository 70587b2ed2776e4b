import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStoredStatus, policyEntry } from '../../../src/controller/policies.ts';
import { computeStatus, sameStatus } from '../../../src/status/index.ts';
import type { RawObject } from '../../../src/kube/index.ts';
import { isContainerProbeRef } from '../../../src/policy/index.ts';
import type { PolicyProbe, ProbeSpec } from '../../../src/policy/index.ts';
import { manifest, selector } from '../../fixtures/policies/manifest.ts';

/** A block's probe as a handler probe (these fixtures write none with fromContainer). */
function ps(probe: PolicyProbe | null | undefined): ProbeSpec {
  assert.ok(probe !== null && probe !== undefined && !isContainerProbeRef(probe), 'a handler probe');
  return probe;
}

/** A policy in namespace `noisy` whose probes ask for an hour (finding 2: such probes held every slot). */
function hourLong(): RawObject {
  const m = manifest('slow', {
    selector,
    mode: 'Observe',
    readiness: { probe: { httpGet: { port: 8080 }, timeoutSeconds: 3600, periodSeconds: 1 } },
    liveness: { probe: { tcpSocket: { port: 8080 }, timeoutSeconds: 60 } },
    startup: { probe: { tcpSocket: { port: 8080 }, timeoutSeconds: 61 } },
  });
  return { ...m, metadata: { ...m.metadata, namespace: 'noisy', uid: 'u1', generation: 1 } } as unknown as RawObject;
}

describe('policyEntry: the controller-wide maximum probe timeout', () => {
  it('runs probes above the default maximum (60 s) with 60 s and lists them', () => {
    const entry = policyEntry(hourLong(), { execEnabled: false });
    const spec = entry.policy?.spec;
    assert.ok(spec !== undefined);
    assert.equal(ps(spec.readiness?.probe).timeoutSeconds, 60);
    assert.equal(ps(spec.liveness?.probe).timeoutSeconds, 60, 'at the maximum: unchanged');
    assert.equal(ps(spec.startup?.probe).timeoutSeconds, 60);
    assert.deepEqual(entry.cappedTimeouts, [
      { kind: 'startup', requestedSeconds: 61, appliedSeconds: 60 },
      { kind: 'readiness', requestedSeconds: 3600, appliedSeconds: 60 },
    ]);
  });

  it('honours a configured maximum', () => {
    const entry = policyEntry(hourLong(), { execEnabled: false }, undefined, 5);
    assert.deepEqual(
      [ps(entry.policy?.spec.startup?.probe).timeoutSeconds, ps(entry.policy?.spec.liveness?.probe).timeoutSeconds, ps(entry.policy?.spec.readiness?.probe).timeoutSeconds],
      [5, 5, 5],
    );
    assert.equal(entry.cappedTimeouts?.length, 3);
  });

  it('leaves a policy within the maximum as validated', () => {
    const entry = policyEntry(hourLong(), { execEnabled: false }, undefined, 3600);
    assert.deepEqual(entry.cappedTimeouts, []);
    assert.equal(ps(entry.policy?.spec.readiness?.probe).timeoutSeconds, 3600);
  });
});

describe('parseStoredStatus: a status stored before status.diverged existed (ADR 0023)', () => {
  const input = { generation: 1, invalid: null, synced: true, pods: 2, ready: 2, failing: 0, ungated: 0, erroring: 0, diverged: 0, planIssues: [], remediations: 0, halted: false, now: '2026-11-26T00:00:00Z' };
  it('keeps the field absent, so the first status computed (diverged: 0) differs from it and is written', () => {
    const computed = computeStatus(input, undefined);
    const stored = JSON.parse(JSON.stringify(computed)) as Record<string, unknown>;
    assert.equal(parseStoredStatus(stored)?.diverged, 0);
    delete stored['diverged'];
    const older = parseStoredStatus(stored);
    assert.ok(older !== undefined && !('diverged' in older));
    assert.equal(sameStatus(older, computed), false);
  });
});
