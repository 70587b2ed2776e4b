// The nftables text of each fault: where it matches and what it leaves alone. The
// integration test proves the kernel does what the text says; this pins the text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  blackholeTables, degradeHostTables, degradeNodeTables, degradeStatements, isolateFromPodsTables, isolatePodTables,
  type TableText,
} from '../../support/podnet/rules.ts';

function first(ts: readonly TableText[]): TableText {
  const t = ts[0];
  assert.ok(t !== undefined);
  return t;
}

void test('isolatePod drops only forwarded traffic between the pod and the uplink', () => {
  const all = isolatePodTables('opn1-f1', '198.18.17.5');
  assert.equal(all.length, 1);
  const t = first(all);
  assert.equal(t.family, 'inet');
  assert.match(t.text, /type filter hook forward priority -10; policy accept;/);
  assert.match(t.text, /iifname "uplink" ip daddr 198\.18\.17\.5 drop/);
  assert.match(t.text, /oifname "uplink" ip saddr 198\.18\.17\.5 drop/);
  assert.doesNotMatch(t.text, /hook (input|output)/);
});

void test('isolateFromPods covers routed (inet) and same-bridge (bridge) traffic to every podCIDR', () => {
  const ts = isolateFromPodsTables('opn1-f2', '198.18.17.200', ['198.18.17.0/25', '198.18.18.0/25']);
  assert.deepEqual(ts.map((t) => t.family), ['inet', 'bridge']);
  for (const t of ts) assert.match(t.text, /ip saddr 198\.18\.17\.200 ip daddr \{ 198\.18\.17\.0\/25, 198\.18\.18\.0\/25 \} drop/);
});

void test('blackholeNode drops everything at the uplink device, both ways', () => {
  const t = first(blackholeTables('opn1-f3'));
  assert.equal(t.family, 'netdev');
  assert.match(t.text, /hook ingress device "uplink"[^}]*\n\s+drop\n/);
  assert.match(t.text, /hook egress device "uplink"[^}]*\n\s+drop\n/);
});

void test('degrade: loss uses numgen, 100% omits it, reset answers TCP with RST and the rest with ICMP', () => {
  assert.deepEqual(degradeStatements({ to: '198.18.2.5/32', lossPercent: 30 }), ['ip daddr 198.18.2.5/32 numgen random mod 100 < 30 drop']);
  assert.deepEqual(degradeStatements({ from: '198.18.1.0/24', to: '198.18.2.0/25' }), ['ip saddr 198.18.1.0/24 ip daddr 198.18.2.0/25 drop']);
  assert.deepEqual(degradeStatements({ to: '198.18.2.5/32', reset: true }), [
    'meta l4proto tcp ip daddr 198.18.2.5/32 reject with tcp reset',
    'meta l4proto != tcp ip daddr 198.18.2.5/32 reject',
  ]);
  assert.throws(() => degradeStatements({ to: '198.18.2.5/32', lossPercent: 0 }), RangeError);
  assert.throws(() => degradeStatements({ to: '198.18.2.5/32', lossPercent: 101 }), RangeError);
  assert.throws(() => degradeStatements({ to: '198.18.2.5/32', lossPercent: 2.5 }), RangeError);
});

void test('degrade is placed where packets originate: node bridge ingress, node output, host output', () => {
  const node = first(degradeNodeTables('opn1-f4', { to: '198.18.2.5/32' }));
  assert.match(node.text, /hook forward[^}]*iifname "cbr0" ip daddr 198\.18\.2\.5\/32 drop/);
  assert.match(node.text, /hook output[^}]*\n\s+ip daddr 198\.18\.2\.5\/32 drop/);
  const host = first(degradeHostTables('opn1-f4', { to: '198.18.2.5/32' }));
  assert.match(host.text, /hook output/);
  assert.doesNotMatch(host.text, /hook forward/);
});
