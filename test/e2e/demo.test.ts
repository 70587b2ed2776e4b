// `npm run demo` as a new user runs it, minus the endless watch at the end:
// the scripted scenario must show the gate going False and True again, then
// an eviction replacing the pod, and leave no process behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

test('npm run demo runs its scenario end to end and cleans up', { timeout: 300_000 }, async () => {
  const script = fileURLToPath(new URL('../../scripts/demo.ts', import.meta.url));
  const child = spawn(process.execPath, [script, '--exit-after-scenario'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, out.slice(-3000));
  // What a user looks at: the policy's printer columns, the gate column, the Events.
  assert.match(out, /NAME\s+MODE\s+PODS\s+READY\s+FAILING\s+REMEDIATED\s+AGE\s+MESSAGE/);
  assert.match(out, /web\s+Enforce\s+3\s+3\s+0\s+0\s+\S+\s+3\/3 ready/);
  assert.match(out, /READINESS GATES/);
  assert.match(out, /\s0\/1\n/, 'a pod shown with its gate not ready');
  assert.match(out, /Set condition outprobe\.io\/web to False: Readiness probe failed: HTTP probe failed with statuscode: 503/);
  assert.match(out, /Remediated\s+web-\S+\s+\d+\s+Evicted pod web-/);
  assert.match(out, /Scenario done/);
  assert.match(out, /Stopping: controller, simulated pods, control plane/);
});
