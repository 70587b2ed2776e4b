// Finding 7 (prototype keys): keys that come from a policy or a pod are looked
// up as own keys only. `constructor`, `toString`, `hasOwnProperty` and
// `valueOf` are valid label keys and env var names; a plain-object lookup
// found Object.prototype's members under them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectPod } from '../../../src/kube/index.ts';
import type { LabelSelector } from '../../../src/policy/index.ts';
import { expandCommand, matchesSelector } from '../../../src/targets/index.ts';

const inherited = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf', '__defineGetter__'];
const labels = { app: 'web' };
const expr = (key: string, operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist', values: string[] = []): LabelSelector => ({
  matchLabels: {},
  matchExpressions: [{ key, operator, values }],
});

describe('matchesSelector looks labels up as own keys', () => {
  for (const key of inherited) {
    it(`${key}: Exists does not match a pod without that label; DoesNotExist does; NotIn matches`, () => {
      assert.equal(matchesSelector(labels, expr(key, 'Exists')), false);
      assert.equal(matchesSelector(labels, expr(key, 'DoesNotExist')), true);
      assert.equal(matchesSelector(labels, expr(key, 'NotIn', ['x'])), true);
      assert.equal(matchesSelector(labels, expr(key, 'In', ['x'])), false);
    });
  }

  it('a pod that has such a label is matched by its value', () => {
    const withLabel = JSON.parse('{"app":"web","constructor":"yes"}') as Record<string, string>;
    assert.equal(matchesSelector(withLabel, expr('constructor', 'Exists')), true);
    assert.equal(matchesSelector(withLabel, expr('constructor', 'In', ['yes'])), true);
    assert.equal(matchesSelector(withLabel, { matchLabels: { constructor: 'yes' }, matchExpressions: [] }), true);
    assert.equal(matchesSelector(labels, { matchLabels: { constructor: 'yes' }, matchExpressions: [] }), false);
  });

  it('matchLabels with an own __proto__ key (as JSON.parse builds it) requires that label', () => {
    const selector = { matchLabels: JSON.parse('{"__proto__":"x"}') as Record<string, string>, matchExpressions: [] };
    assert.equal(matchesSelector(labels, selector), false);
  });
});

describe('exec command $(VAR) expansion looks env up as own keys', () => {
  it('$(constructor) and friends stay literal when the container has no such variable', () => {
    for (const name of inherited.filter((n) => /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(n))) {
      assert.deepEqual(expandCommand([`echo $(${name})`], { GREETING: 'hi' }), [`echo $(${name})`], name);
    }
    assert.deepEqual(expandCommand(['$(GREETING) $$(GREETING)'], { GREETING: 'hi' }), ['hi $(GREETING)']);
  });

  it('a pod env var named __proto__ or constructor is kept and expanded (projectPod)', () => {
    const raw = JSON.parse(`{"metadata":{"uid":"u","name":"p","namespace":"n"},"spec":{"containers":[{"name":"c","env":[
      {"name":"__proto__","value":"proto-value"},{"name":"constructor","value":"ctor-value"},{"name":"toString","value":"ts"}]}]}}`) as Record<string, unknown>;
    const env = projectPod(raw).containers[0]?.env ?? {};
    assert.deepEqual(expandCommand(['$(__proto__)', '$(constructor)', '$(toString)', '$(valueOf)'], env), ['proto-value', 'ctor-value', 'ts', '$(valueOf)']);
  });
});
