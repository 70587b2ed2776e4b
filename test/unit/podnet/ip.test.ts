// IPv4 helpers under the address plan and the fault validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkLabel, cidrContains, cidrsOverlap, cidrWithin, intToIp, ipToInt, parseCidr } from '../../support/podnet/ip.ts';

void test('round trip and malformed addresses', () => {
  assert.equal(intToIp(ipToInt('198.19.255.254')), '198.19.255.254');
  assert.equal(ipToInt('0.0.1.2'), 258);
  for (const bad of ['1.2.3', '1.2.3.256', 'a.b.c.d', '1.2.3.4 ', '']) assert.throws(() => ipToInt(bad), RangeError, bad);
});

void test('CIDRs: host bits, bare addresses, containment and overlap', () => {
  assert.throws(() => parseCidr('198.18.0.1/24'), /host bits/);
  assert.throws(() => parseCidr('198.18.0.0/33'), RangeError);
  assert.throws(() => parseCidr('198.18.0.0/'), RangeError);
  assert.equal(parseCidr('198.18.0.9').text, '198.18.0.9/32');
  assert.ok(cidrContains('198.18.0.0/25', '198.18.0.127'));
  assert.ok(!cidrContains('198.18.0.0/25', '198.18.0.128'));
  assert.ok(cidrsOverlap('198.18.0.0/20', '198.18.15.7'));
  assert.ok(!cidrsOverlap('198.18.0.0/20', '198.18.16.0/24'));
  assert.ok(cidrWithin('198.18.0.0/20', '198.18.1.0/24'));
  assert.ok(!cidrWithin('198.18.0.0/20', '198.18.0.0/19'));
});

void test('sandbox labels', () => {
  assert.equal(checkLabel('replica-0'), 'replica-0');
  for (const bad of ['', '-a', 'a-', 'A', 'a_b', 'x'.repeat(41)]) assert.throws(() => checkLabel(bad), RangeError, bad);
});
