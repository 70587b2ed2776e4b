// `npm run demo` on real nodes, as a newcomer runs it (minus the endless watch): outprobe's own
// pods (chart, image) listed beside the workload in `kubectl get pods -A -o wide`, and the
// cut pod's gate and Ready going False while its kubelet keeps ContainersReady, then back;
// nothing left behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

test('npm run demo runs on real nodes, shows outprobe\'s pods beside the workload, and cleans up', { timeout: 900_000 }, async () => {
  const script = fileURLToPath(new URL('../../scripts/demo.ts', import.meta.url));
  const child = spawn(process.execPath, [script, '--exit-after-scenario'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, out.slice(-4000));
  assert.doesNotMatch(out, /No real nodes on this host/);
  // kubectl get pods -A -o wide: NAMESPACE NAME READY STATUS RESTARTS AGE IP NODE ...
  assert.match(out, /outprobe-system\s+outprobe-\S+\s+1\/1\s+Running\s+0\s+\S+\s+198\.\S+\s+real-node-1/, 'an outprobe replica on real-node-1');
  assert.match(out, /outprobe-system\s+outprobe-\S+\s+1\/1\s+Running\s+0\s+\S+\s+198\.\S+\s+real-node-2/, 'an outprobe replica on real-node-2');
  assert.match(out, /shop\s+web-\S+\s+1\/1\s+Running\s+0\s+\S+\s+198\.\S+\s+real-node-0/, 'the workload on real-node-0');
  const cut = /Cutting (web-\S+) \(/.exec(out)?.[1];
  assert.ok(cut !== undefined, 'the demo names the pod it cuts');
  const order = [`${cut}: outprobe.io/web=False`, `${cut}: Ready=False`, 'Healing the partition', `${cut}: outprobe.io/web=True`, `${cut}: Ready=True`];
  let at = 0;
  for (const s of order) {
    const i = out.indexOf(s, at);
    assert.ok(i >= 0, `"${s}" printed after the previous step\n${out.slice(-4000)}`);
    at = i;
  }
  assert.ok(!out.includes(`${cut}: ContainersReady=False`), 'its kubelet kept ContainersReady True');
  assert.match(out, new RegExp(`${cut.slice(-5)}\\s+0\\s.*failed 0`), 'a second with no request reaching the cut pod and none failing');
  assert.match(out, /Scenario done/);
  const prefix = /podnet (opn\d+):/.exec(out)?.[1];
  assert.ok(prefix !== undefined, 'the demo built a pod network');
  const left = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').filter((l) => l.startsWith(`${prefix}-`));
  assert.deepEqual(left, [], 'no namespace of the demo left');
});
