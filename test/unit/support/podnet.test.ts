// Loopback pod networks are claimed per control plane and reclaimed when stale.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

const dir = mkdtempSync(path.join(os.tmpdir(), 'outprobe-podnet-test-'));
process.env['OUTPROBE_PODNET_DIR'] = dir;
const { claimPodNetwork } = await import('../../support/cluster/podnet.ts');

void test('concurrent claims get different /16s and node CIDRs inside them', () => {
  const a = claimPodNetwork();
  const b = claimPodNetwork();
  try {
    assert.notEqual(a.octet, b.octet);
    for (const n of [a, b]) {
      assert.ok(n.octet >= 2 && n.octet <= 254);
      assert.equal(n.nodeCidr(1), `127.${n.octet}.1.0/24`);
    }
  } finally {
    a.release();
    b.release();
  }
});

void test('a claim whose owner process is gone is taken over', () => {
  for (let x = 2; x <= 254; x++) writeFileSync(path.join(dir, String(x)), String(process.pid));
  assert.throws(() => claimPodNetwork(), /no free loopback pod network/);
  writeFileSync(path.join(dir, '77'), '999999999'); // no such process
  const n = claimPodNetwork();
  assert.equal(n.octet, 77);
  rmSync(dir, { recursive: true, force: true });
});
