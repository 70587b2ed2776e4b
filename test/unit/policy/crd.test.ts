import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { crdPath, probePolicyCrdYaml } from '../../../src/policy/crd-yaml.ts';
import { specSchema } from '../../../src/policy/schema.ts';
import { invalidPolicies } from '../../fixtures/policies/invalid.ts';

type Node = Record<string, unknown>;

const file = new URL(`../../../${crdPath}`, import.meta.url);

function node(value: unknown): Node {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object');
  return value as Node;
}

function at(root: Node, ...path: string[]): Node {
  return path.reduce<Node>((n, key) => node(n[key]), root);
}

const crd = node(parse(readFileSync(file, 'utf8')));
const version = node((at(crd, 'spec')['versions'] as unknown[])[0]);
const root = at(version, 'schema', 'openAPIV3Schema');
const spec = at(root, 'properties', 'spec');

/** Every schema node below `n` with its dotted path (properties, items, additionalProperties). */
function walk(n: Node, path: string, visit: (n: Node, path: string) => void): void {
  visit(n, path);
  const props = n['properties'];
  if (props !== undefined) for (const [k, v] of Object.entries(node(props))) walk(node(v), `${path}.${k}`, visit);
  if (n['items'] !== undefined) walk(node(n['items']), `${path}[]`, visit);
}

function rulesOf(n: Node): { rule: string; message: string }[] {
  return (n['x-kubernetes-validations'] ?? []) as { rule: string; message: string }[];
}

void describe('crds/outprobe.io_probepolicies.yaml', () => {
  void it('is exactly what src/policy/crd.ts generates (UPDATE_CRD=1 rewrites it)', () => {
    const generated = probePolicyCrdYaml();
    if (process.env['UPDATE_CRD'] === '1') writeFileSync(file, generated);
    assert.equal(readFileSync(file, 'utf8'), generated, 'stale CRD: run UPDATE_CRD=1 node --test test/unit/policy/crd.test.ts');
  });

  void it('names probepolicies.outprobe.io, namespaced, v1alpha1 served and stored, with a status subresource', () => {
    assert.equal(crd['apiVersion'], 'apiextensions.k8s.io/v1');
    assert.equal(at(crd, 'metadata')['name'], 'probepolicies.outprobe.io');
    assert.equal(at(crd, 'spec')['group'], 'outprobe.io');
    assert.equal(at(crd, 'spec')['scope'], 'Namespaced');
    assert.deepEqual(at(crd, 'spec', 'names'), {
      kind: 'ProbePolicy',
      listKind: 'ProbePolicyList',
      plural: 'probepolicies',
      singular: 'probepolicy',
      shortNames: ['pp'],
      categories: ['outprobe'],
    });
    assert.equal((at(crd, 'spec')['versions'] as unknown[]).length, 1);
    assert.equal(version['name'], 'v1alpha1');
    assert.equal(version['served'], true);
    assert.equal(version['storage'], true);
    assert.deepEqual(at(version, 'subresources'), { status: {} });
  });

  void it('describes every field (metadata excepted: the API server forbids it)', () => {
    const missing: string[] = [];
    walk(root, '', (n, path) => {
      if (path === '.metadata') return;
      if (typeof n['description'] !== 'string' || n['description'].length < 8) missing.push(path);
    });
    assert.deepEqual(missing, []);
  });

  void it('is structural: every node has a type, or is int-or-string', () => {
    const untyped: string[] = [];
    walk(root, '', (n, path) => {
      if (n['type'] === undefined && n['x-kubernetes-int-or-string'] !== true) untyped.push(path);
    });
    assert.deepEqual(untyped, []);
  });

  void it('bounds every string and list under spec, so CEL rules fit the cost budget', () => {
    const unbounded: string[] = [];
    walk(spec, 'spec', (n, path) => {
      if (n['type'] === 'string' && n['maxLength'] === undefined && n['enum'] === undefined) unbounded.push(path);
      if (n['type'] === 'array' && n['maxItems'] === undefined) unbounded.push(path);
    });
    assert.deepEqual(unbounded, []);
  });

  void it('gives every CEL rule a message', () => {
    walk(root, '', (n, path) => {
      // Short is fine when it is the API server's own Pod wording ("must be 1"): a field path comes with it.
      for (const r of rulesOf(n)) assert.ok(r.message.length > 0, `${path}: ${r.rule}`);
    });
  });

  // ADR 0023: the five timing fields carry no server-side default, so that a
  // fromContainer probe can tell what its author wrote; the description states
  // the kubelet's default and the controller applies it (validate.test.ts).
  void it('documents every probe default the kubelet applies, in all three probe kinds, and defaults the handler fields', () => {
    const kubelet = { initialDelaySeconds: 0, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
    for (const kind of ['readiness', 'liveness', 'startup']) {
      const probe = at(spec, 'properties', kind, 'properties', 'probe', 'properties');
      for (const [f, v] of Object.entries(kubelet)) {
        assert.equal(at(probe, f)['default'], undefined, `${kind}.${f}: no server-side default`);
        assert.ok(String(at(probe, f)['description']).includes(`Default: ${v}, applied by the controller`), `${kind}.${f} documents its default`);
      }
      assert.equal(at(probe, 'httpGet', 'properties', 'path')['default'], '/');
      assert.equal(at(probe, 'httpGet', 'properties', 'scheme')['default'], 'HTTP');
      assert.equal(at(probe, 'grpc', 'properties', 'service')['default'], '');
      assert.equal(at(probe, 'terminationGracePeriodSeconds')['default'], undefined);
      assert.deepEqual(at(probe, 'fromContainer')['enum'], ['readinessProbe', 'livenessProbe', 'startupProbe']);
    }
  });

  void it('refuses fromContainer together with a handler, and a probe with neither, in CEL', () => {
    const rules = rulesOf(at(spec, 'properties', 'readiness', 'properties', 'probe')).map((r) => r.message);
    assert.ok(rules.includes("fromContainer runs the container's own probe: it may not be set together with a handler (exec, httpGet, tcpSocket or grpc)"));
    assert.ok(rules.includes('must specify a handler type'));
  });

  void it('defaults mode, liveness action and the remediation budget', () => {
    const p = at(spec, 'properties');
    assert.equal(at(p, 'mode')['default'], 'Enforce');
    assert.equal(at(p, 'liveness', 'properties', 'action')['default'], 'Evict');
    assert.deepEqual(at(p, 'remediation')['default'], {});
    assert.equal(at(p, 'remediation', 'properties', 'maxUnavailable')['default'], 1);
    assert.equal(at(p, 'remediation', 'properties', 'haltAbovePercentFailing')['default'], 50);
    assert.equal(at(p, 'secondOpinion')['default'], true);
    assert.deepEqual(
      [at(p, 'readiness', 'properties', 'maxUnreadyPercent')['default'], at(p, 'readiness', 'properties', 'maxUnreadyPercent')['minimum'], at(p, 'readiness', 'properties', 'maxUnreadyPercent')['maximum']],
      [50, 0, 100],
    );
    assert.match(String(at(p, 'readiness', 'properties', 'conditionType')['description']), /outprobe\.io\/<policy name>/);
  });

  void it('declares host in httpGet and tcpSocket only to forbid it with a CEL rule', () => {
    for (const kind of ['readiness', 'liveness', 'startup']) {
      for (const handler of ['httpGet', 'tcpSocket']) {
        const h = at(spec, 'properties', kind, 'properties', 'probe', 'properties', handler);
        assert.equal(at(h, 'properties', 'host')['type'], 'string');
        assert.ok(rulesOf(h).some((r) => r.rule === '!has(self.host)' && r.message.startsWith('host is not allowed')));
      }
    }
  });

  void it('has the printer columns STATUS, MODE, PODS, PODS-READY, PODS-FAILING, DIVERGED, NOVANTAGE, REMEDIATED, AGE and MESSAGE, all by default', () => {
    const columns = version['additionalPrinterColumns'] as Node[];
    assert.deepEqual(
      columns.map((c) => [String(c['name']).toUpperCase(), c['priority'] ?? 0]),
      [['STATUS', 0], ['MODE', 0], ['PODS', 0], ['PODS-READY', 0], ['PODS-FAILING', 0], ['DIVERGED', 0], ['NOVANTAGE', 0], ['REMEDIATED', 0], ['AGE', 0], ['MESSAGE', 0]],
    );
    assert.equal(columns.find((c) => c['name'] === 'Diverged')?.['jsonPath'], '.status.diverged');
    assert.equal(columns.find((c) => c['name'] === 'NoVantage')?.['jsonPath'], '.status.noVantage');
    assert.equal(columns.find((c) => c['name'] === 'Status')?.['jsonPath'], '.status.conditions[?(@.type=="Ready")].reason');
    for (const c of columns) assert.ok(typeof c['description'] === 'string' && c['jsonPath'] !== undefined);
  });

  void it('has the status fields, with conditions as a list-map keyed by type', () => {
    const status = at(root, 'properties', 'status', 'properties');
    assert.deepEqual(Object.keys(status).sort(), [
      'conditions', 'diverged', 'failing', 'message', 'noVantage', 'observedGeneration', 'pods', 'ready', 'remediations', 'ungated',
    ]);
    const conditions = at(status, 'conditions');
    assert.equal(conditions['x-kubernetes-list-type'], 'map');
    assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
    assert.deepEqual(at(conditions, 'items')['required'], ['type', 'status', 'lastTransitionTime', 'reason', 'message']);
  });

  void it('carries every expected rejection message of the invalid table (CEL) or produces it (OpenAPI)', () => {
    const text = readFileSync(file, 'utf8');
    const openApi = /^(should be (greater|less) than or equal to \d+|must be of type \w+|Required value|supported values: .*)$/;
    for (const { name, expectMessage } of invalidPolicies) {
      assert.ok(text.includes(expectMessage) || openApi.test(expectMessage), `${name}: ${expectMessage}`);
    }
  });
});

void describe('zod schema ↔ CRD', () => {
  const zodSpec = node(z.toJSONSchema(specSchema, { unrepresentable: 'any', io: 'input' }));
  const compared = ['type', 'enum', 'minimum', 'maximum', 'maxLength', 'maxItems', 'required'] as const;

  function compare(c: Node, zn: Node, path: string, diffs: string[]): void {
    for (const key of compared) {
      if (c[key] !== undefined && JSON.stringify(c[key]) !== JSON.stringify(zn[key])) {
        diffs.push(`${path} ${key}: crd ${JSON.stringify(c[key])} zod ${JSON.stringify(zn[key])}`);
      }
    }
    // An object default ({}) is a prefault in zod: its fields' defaults fill it.
    if (c['default'] !== undefined && typeof c['default'] !== 'object' && zn['default'] !== c['default']) {
      diffs.push(`${path} default: crd ${JSON.stringify(c['default'])} zod ${JSON.stringify(zn['default'])}`);
    }
    const cp = c['properties'] === undefined ? {} : node(c['properties']);
    const zp = zn['properties'] === undefined ? {} : node(zn['properties']);
    if (JSON.stringify(Object.keys(cp).sort()) !== JSON.stringify(Object.keys(zp).sort())) {
      diffs.push(`${path} properties: crd ${Object.keys(cp).join(',')} zod ${Object.keys(zp).join(',')}`);
    }
    for (const [k, v] of Object.entries(cp)) if (zp[k] !== undefined) compare(node(v), node(zp[k]), `${path}.${k}`, diffs);
    if (c['items'] !== undefined && zn['items'] !== undefined) compare(node(c['items']), node(zn['items']), `${path}[]`, diffs);
  }

  void it('has the same fields, types, bounds, enums, required lists and scalar defaults', () => {
    const diffs: string[] = [];
    compare(spec, zodSpec, 'spec', diffs);
    assert.deepEqual(diffs, []);
  });
});
