// `npm run demo` as a new user runs it: on the pod network, the scripted partition must
// show the cut pod's gate, Ready, EndpointSlice and kube-proxy routing going away while its
// node keeps ContainersReady, the client no longer reaching it, then all of it coming back;
// then, once it watches, Ctrl-C (SIGINT) ends it with exit code 0, leaving no process,
// namespace, link, table or plane directory (`outprobe-cp-*`, ~124 MB) behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { podNetSupport } from '../support/podnet/index.ts';
import { logsOnFailure } from '../support/replicas/index.ts';

const support = podNetSupport();
const logs = logsOnFailure('demo');

test('npm run demo runs its partition scenario end to end; Ctrl-C then ends it and leaves nothing behind', { timeout: 300_000, skip: support.ok ? false : `needs the pod network: ${support.why}` }, async () => {
  const script = fileURLToPath(new URL('../../scripts/demo.ts', import.meta.url));
  // --kwok: the scenario on simulated nodes (test/e2e-nodes/demo.test.ts runs the real-node one).
  const child = spawn(process.execPath, [script, '--kwok'], { stdio: ['ignore', 'pipe', 'pipe'] });
  logs.record('demo', child);
  let out = '';
  let interrupted = false;
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    // The scenario is done and the demo watches until Ctrl-C: press it.
    if (!interrupted && out.includes('press Ctrl-C to stop')) {
      interrupted = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.ok(interrupted, `the demo reached its watch: ${out.slice(-3000)}`);
  assert.equal(code, 0, out.slice(-3000));
  // What a user looks at: the policy's printer columns, the gate column, the EndpointSlice.
  // STATUS MODE PODS PODS-READY PODS-FAILING DIVERGED NOVANTAGE REMEDIATED AGE MESSAGE
  assert.match(out, /web\s+Probing\s+Enforce\s+3\s+3\s+0\s+0\s+0\s+0\s+\S+\s+3\/3 ready/);
  assert.match(out, /web\s+Probing\s+Enforce\s+3\s+2\s+0\s+1\s+0\s+0\s+\S+\s+2\/3 ready, 1 diverged/, 'the policy shows the cut pod not ready, and diverged from its node');
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
  // The plane's directory: outprobe's log is in its logs/.
  const logFile = /JSON logs in (\S+\/logs\/outprobe\.log)/.exec(out)?.[1];
  assert.ok(logFile !== undefined, 'the demo says where outprobe logs');
  const planeDir = path.dirname(path.dirname(logFile));
  assert.match(path.basename(planeDir), /^outprobe-cp-/);
  assert.equal(existsSync(planeDir), false, `${planeDir} removed after Ctrl-C`);
});
