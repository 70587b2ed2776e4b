// The ADR 0014 address plan: every slot's /20 inside 198.18.0.0/15, node addresses,
// podCIDRs and names as the ADR's table states, and the name family that sweeps rely on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cidrContains, cidrsOverlap, cidrWithin } from '../../support/podnet/ip.ts';
import {
  addressPlan, findNode, hostVethName, podIpProblem, podNetnsName, sandboxIps, sandboxNetnsName, slotOfName, SLOTS,
} from '../../support/podnet/plan.ts';

void test('slot 0 and slot 31 follow the ADR table', () => {
  const p = addressPlan(0, 12);
  assert.equal(p.prefix, 'opn0');
  assert.equal(p.hostIp, '198.18.0.1');
  assert.equal(p.fabricCidr, '198.18.0.0/24');
  assert.equal(p.clusterCidr, '198.18.0.0/20');
  assert.equal(p.serviceCidr, '198.18.15.0/24');
  assert.deepEqual(
    { ...p.nodes[3] },
    {
      index: 3, kind: 'kwok', name: 'kwok-node-3', netns: 'opn0-node-3', ip: '198.18.0.13', podCidr: '198.18.4.0/25',
      subnet: '198.18.4.0/24', gateway: '198.18.4.254', rootLink: 'opn0-n3', bridgeMac: '02:6f:70:00:03:fe',
    },
  );
  const last = addressPlan(31, 12);
  assert.equal(last.clusterCidr, '198.19.240.0/20');
  assert.equal(last.hostIp, '198.19.240.1');
  assert.equal(last.nodes[11]?.subnet, '198.19.252.0/24');
  assert.equal(last.serviceCidr, '198.19.255.0/24');
});

void test('real nodes come after the kwok nodes, named real-node-<j>, on the same address plan (ADR 0047)', () => {
  const p = addressPlan(2, 1, 3);
  assert.deepEqual(p.nodes.map((n) => [n.index, n.kind, n.name, n.netns, n.subnet]), [
    [0, 'kwok', 'kwok-node-0', 'opn2-node-0', '198.18.33.0/24'],
    [1, 'real', 'real-node-0', 'opn2-node-1', '198.18.34.0/24'],
    [2, 'real', 'real-node-1', 'opn2-node-2', '198.18.35.0/24'],
    [3, 'real', 'real-node-2', 'opn2-node-3', '198.18.36.0/24'],
  ]);
  assert.equal(findNode(p, 'real-node-1')?.index, 2);
  assert.throws(() => addressPlan(0, 10, 3), /10 kwok and 3 real nodes: at most 12 in all/);
  assert.throws(() => addressPlan(0, 1, -1), /at most 12 in all/);
});

void test('every slot stays inside 198.18.0.0/15, slots never overlap, link names fit 15 characters', () => {
  const plans = Array.from({ length: SLOTS }, (_, s) => addressPlan(s, 12));
  for (const p of plans) {
    assert.ok(cidrWithin('198.18.0.0/15', p.clusterCidr), p.clusterCidr);
    for (const n of p.nodes) {
      assert.ok(cidrWithin(p.clusterCidr, n.subnet));
      assert.ok(cidrWithin(n.subnet, n.podCidr));
      assert.ok(cidrContains(p.fabricCidr, n.ip));
      assert.ok(!cidrsOverlap(n.subnet, p.serviceCidr));
      assert.ok(n.rootLink.length <= 15, n.rootLink);
    }
    assert.ok(p.fabricBridge.length <= 15, p.fabricBridge);
    for (const q of plans) if (q !== p) assert.ok(!cidrsOverlap(p.clusterCidr, q.clusterCidr));
  }
});

void test('slot and node count out of range are refused', () => {
  assert.throws(() => addressPlan(32, 1), RangeError);
  assert.throws(() => addressPlan(-1, 1), RangeError);
  assert.throws(() => addressPlan(0, 0), RangeError);
  assert.throws(() => addressPlan(0, 13), RangeError);
});

void test('findNode by name, fabric address, pod, sandbox or gateway address', () => {
  const p = addressPlan(2, 3);
  assert.equal(findNode(p, 'kwok-node-2')?.index, 2);
  assert.equal(findNode(p, '198.18.32.11')?.index, 1);
  assert.equal(findNode(p, '198.18.34.7')?.index, 1);
  assert.equal(findNode(p, '198.18.35.200')?.index, 2);
  assert.equal(findNode(p, '198.18.33.254')?.index, 0);
  assert.equal(findNode(p, '198.18.36.1'), undefined); // node 3 does not exist
  assert.equal(findNode(p, 'kwok-node-3'), undefined);
});

void test('pod IPs must lie in the node podCIDR, not the network address; sandboxes take .200-.250', () => {
  const n = addressPlan(0, 2).nodes[1]!;
  assert.equal(podIpProblem(n, '198.18.2.1'), undefined);
  assert.equal(podIpProblem(n, '198.18.2.127'), undefined);
  assert.match(podIpProblem(n, '198.18.2.128') ?? '', /not in kwok-node-1's podCIDR 198\.18\.2\.0\/25/);
  assert.match(podIpProblem(n, '198.18.2.0') ?? '', /network address/);
  assert.match(podIpProblem(n, '198.18.1.5') ?? '', /not in/);
  const s = sandboxIps(n);
  assert.equal(s.length, 51);
  assert.equal(s[0], '198.18.2.200');
  assert.equal(s.at(-1), '198.18.2.250');
});

void test('names: family prefix parses back to the slot; nothing else does', () => {
  assert.equal(podNetnsName('opn7', '198.18.113.5'), 'opn7-pod-198.18.113.5');
  assert.equal(sandboxNetnsName('opn7', '198.18.113.200', 'replica-a'), 'opn7-sbx-198.18.113.200-replica-a');
  assert.throws(() => sandboxNetnsName('opn7', '198.18.113.200', 'Bad Label'), RangeError);
  assert.equal(hostVethName('198.18.113.200'), 'veth200');
  assert.equal(slotOfName('opn7-node-0'), 7);
  assert.equal(slotOfName('opn31-fab'), 31);
  for (const other of ['opn32-x', 'opn07-x', 'opn-x', 'opkp12', 'op-ps-1-a', 'opn7', 'xopn7-a', 'eth0']) {
    assert.equal(slotOfName(other), undefined, other);
  }
});
