// `npm run demo` as a new user runs it, minus the endless watch at the end: on the pod
// network, the scripted partition must show the cut pod's gate, Ready, EndpointSlice
// and kube-proxy routing going away while its node keeps ContainersReady, the client
// no longer reaching it, then all of it coming back; and leave no process, namespace,
// link or table behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { podNetSupport } from '../support/podnet/index.ts';

const support = podNetSupport();

test('npm run demo runs its partition scenario end to end and cleans up', { timeout: 300_000, skip: support.ok ? false : `needs the pod network: ${support.why}` }, async () => {
  const script = fileURLToPath(new URL('../../scripts/demo.ts', import.meta.url));
  // --kwok: the scenario on simulated nodes (test/e2e-nodes/demo.test.ts runs the real-node one).
  const child = spawn(process.execPath, [script, '--exit-after-scenario', '--kwok'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, out.slice(-3000));
  // What a user looks at: the policy's printer columns, the gate column, the EndpointSlice.
  // MODE PODS READY FAILING DIVERGED REMEDIATED AGE MESSAGE
  assert.match(out, /web\s+Enforce\s+3\s+3\s+0\s+0\s+0\s+\S+\s+3\/3 ready/);
  assert.match(out, /web\s+Enforce\s+3\s+2\s+0\s+1\s+0\s+\S+\s+2\/3 ready, 1 diverged/, 'the policy shows the cut pod not ready, and diverged from its node');
  assert.match(out, /READINESS GATES/);
  assert.match(out, /\s0\/1\n/, 'a pod shown with its gate not ready');
  assert.match(out, /true,false,true|false,true,true|true,true,false/, 'the EndpointSlice marks one endpoint not ready');
  // The chain, printed as it happens, in order.
  const cut = /Cutting (web-\S+) \(/.exec(out)?.[1];
  assert.ok(cut !== undefined, 'the demo names the pod it cuts');
  const order = [`${cut}: gate outprobe.io/web=False`, `${cut}: Ready=False`, `${cut}: EndpointSlice: not ready`, `${cut}: kube-proxy on kwok-node-0: no longer routes to it`,
    'Healing the partition', `${cut}: gate outprobe.io/web=True`, `${cut}: Ready=True`, `${cut}: kube-proxy on kwok-node-0: routes to it again`];
  let at = 0;
  for (const s of order) {
    const i = out.indexOf(s, at);
    assert.ok(i >= 0, `"${s}" printed after the previous step`);
    at = i;
  }
  assert.match(out, /left the Service \d+ ms after the cut: outprobe detected \d+ ms, gate write -?\d+ ms, Ready fold -?\d+ ms, EndpointSlice -?\d+ ms, kube-proxy -?\d+ ms; its node kept ContainersReady=True/);
  // While cut off (after kube-proxy dropped it), the client's per-second counts show 0 for the pod and no failures.
  const short = cut.slice(-5);
  assert.match(out, new RegExp(`${short}\\s+0\\s.*failed 0`), 'a second with no request reaching the cut pod and none failing');
  assert.match(out, /answers again \d+ ms after the heal/);
  assert.match(out, /Scenario done/);
  assert.match(out, /Stopping: client, outprobe, simulated pods, node agents, kube-proxies, control plane, pod network/);
  const prefix = /\/run\/netns\/(opn\d+)-/.exec(out)?.[1];
  assert.ok(prefix !== undefined, 'the demo served pods in namespaces of the pod network');
  const left = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).split('\n').filter((l) => l.startsWith(`${prefix}-`));
  assert.deepEqual(left, [], 'no namespace of the demo left');
});
