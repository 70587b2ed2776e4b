import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  isDnsLabel,
  isHttpToken,
  isLabelValue,
  isMaxUnavailable,
  isPortName,
  isQualifiedName,
  isReservedConditionType,
  portProblem,
} from '../../../src/policy/rules.ts';

function table<T>(fn: (v: T) => boolean, good: readonly T[], bad: readonly T[]): void {
  for (const v of good) assert.equal(fn(v), true, `expected ${JSON.stringify(v)} to pass`);
  for (const v of bad) assert.equal(fn(v), false, `expected ${JSON.stringify(v)} to fail`);
}

void describe('rules (the same regular expressions the CRD runs in CEL)', () => {
  void it('port names follow IANA_SVC_NAME as core/v1 validates them', () => {
    table(isPortName, ['http', 'h', 'a1', 'web-8080', '1x', 'abcdefghijklmno'], [
      '', '-http', 'http-', 'http--x', 'HTTP', 'web_1', '8080', 'abcdefghijklmnop', 'toolongportname16',
    ]);
  });

  void it('port numbers are integers from 1 to 65535', () => {
    assert.equal(portProblem(1), null);
    assert.equal(portProblem(65535), null);
    for (const n of [0, -1, 65536, 80.5]) assert.match(String(portProblem(n)), /between 1 and 65535/);
    assert.match(String(portProblem('-x')), /IANA_SVC_NAME/);
  });

  void it('condition types and label keys are qualified names', () => {
    table(isQualifiedName, ['outprobe.io/web', 'web', 'Web_Ready.v1', 'a.b-c/X', `${'a'.repeat(253)}/x`, `x/${'a'.repeat(63)}`], [
      '', '/x', 'x/', 'a/b/c', 'Example.com/x', 'outprobe.io/bad name', '-x', 'x-', `${'a'.repeat(254)}/x`, `x/${'a'.repeat(64)}`,
    ]);
  });

  void it('reserves the conditions Kubernetes owns', () => {
    table(isReservedConditionType, ['Ready', 'ContainersReady', 'PodScheduled', 'DisruptionTarget'], ['ready', 'outprobe.io/Ready']);
  });

  void it('label values, container names and header names', () => {
    table(isLabelValue, ['', 'web', 'a.b_c-D', 'x'.repeat(63)], ['-web', 'web-', 'a b', 'x'.repeat(64)]);
    table(isDnsLabel, ['web', 'a', 'web-1', 'a'.repeat(63)], ['', 'Web', 'web-', '-web', 'a.b', 'a'.repeat(64)]);
    table(isHttpToken, ['X-Probe', 'User-Agent', "a!#$%&'*+-.^_`|~"], ['', 'X Probe', 'X:A', 'é']);
  });

  void it('maxUnavailable is a non-negative integer or 0%–100%', () => {
    table(isMaxUnavailable, [0, 1, 1000, '0%', '5%', '25%', '100%'], [-1, 1.5, '150%', '101%', '05%', '5', '%', '-5%']);
  });
});
