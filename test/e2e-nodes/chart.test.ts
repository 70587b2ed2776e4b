// The chart with outprobe's own image on real nodes (issue 29; docs/adr/0047-real-nodes.md,
// 0048-images-without-a-registry.md): three real nodes (a real kubelet with containerd and
// runc each), the replicas on real-node-1 and real-node-2, the workloads on real-node-0, so
// every workload pod has two eligible replicas (vantage) and a second opinion to ask.
// Checked with the real kubelet: replicas Running and Ready by their own probes, in-cluster
// credentials from a projected token, shard Leases, the API server calling the webhook
// through its Service, a workload's own readinessProbe and outprobe's gate folded into
// Ready, traffic through kube-proxy leaving a cut-off pod the kubelet still calls
// ContainersReady (the divergence view counting it), /metrics with a ServiceAccount token,
// the second opinion between the replica pods, a rolling update (SIGTERM, Leases released,
// no pod unprobed longer than the sharding e2e's bound), helm upgrade and uninstall; and
// broken parts: a read-only root filesystem write, a revoked token, an image missing a file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { request } from 'undici';
import { issueCertificate } from '../../src/injection/index.ts';
import { startServiceClient } from '../support/netclient/index.ts';
import type { ServiceClient } from '../support/netclient/index.ts';
import { buildOutprobeImage, importImage } from '../support/images/index.ts';
import { CHART, chartArgs, condition, createNamespace, deployWeb, dumpLogs, listPods, NS, ok, RELEASE, startRealPlane, until } from './support.ts';
import type { PodJson, RealPlane } from './support.ts';

function spawnSyncOk(cmd: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const REPO = new URL('../..', import.meta.url).pathname;
const APP_NS = 'shop';
const POLICY = 'web';
const GATE = `outprobe.io/${POLICY}`;
const REPLICA_NODES = ['real-node-1', 'real-node-2'];
const WORKLOAD_NODE = 'real-node-0';
const RELEASE_SELECTOR = `app.kubernetes.io/instance=${RELEASE}`;
/** The workload's readinessProbe period (the policy runs it from outside: fromContainer). */
const PERIOD_S = 1;

describe('the chart with outprobe\'s own image on real nodes', { timeout: 1_800_000 }, () => {
  let p: RealPlane;
  let image: string;
  const fail = (what: string): string => `${what}\n${dumpLogs(p, [NS, APP_NS])}`;
  const replicas = (): Promise<PodJson[]> => listPods(p.cp, NS, RELEASE_SELECTOR);
  const webPods = (): Promise<PodJson[]> => listPods(p.cp, APP_NS, 'app=web');
  const kube = (): RealPlane['cp']['kube'] => p.cp.kube;

  before(async () => {
    p = await startRealPlane(3);
    assert.ok(p.cp.images !== undefined);
    image = p.cp.images.outprobe.name;
    // The ServiceAccount admission plugin runs on this plane: pods wait for their namespace's default ServiceAccount.
    await createNamespace(p, NS, false);
    await createNamespace(p, APP_NS, true);
  });

  afterEach((t) => { if ((t as { passed?: boolean }).passed === false) p.failed(); }); // TestContext#passed (Node 24; not in @types/node 24.19)
  after(async () => {
    await p.stop();
  });

  it('helm install: both replicas Running and Ready by their own kubelet probes, one per real node, outprobe\'s image as user 65532', async () => {
    ok(p.helm('install', RELEASE, CHART, '--namespace', NS, ...chartArgs(image, REPLICA_NODES), '--wait', '--timeout', '5m'), 'helm install');
    const pods = await until('2 replicas Ready', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True') ? ps : undefined;
    }, 180_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
    assert.deepEqual(pods.map((x) => x.spec.nodeName).sort(), REPLICA_NODES);
    for (const x of pods) {
      assert.equal(x.status.phase, 'Running');
      const cs = x.status.containerStatuses?.[0];
      assert.ok(cs?.ready, 'ContainersReady by the kubelet running /readyz');
      assert.equal(cs.restartCount, 0, fail(`${x.metadata.name} restarted`));
      assert.equal(cs.image, image);
      const uid = ok(p.kubectl('exec', '-n', NS, x.metadata.name, '--', '/nodejs/bin/node', '-e', 'process.stdout.write(`${process.getuid()}:${process.getgid()} ${process.cwd()} ${process.env.NODE_ENV}`)'), 'kubectl exec');
      assert.equal(uid, '65532:65532 /app production');
    }
  });

  it('in-cluster credentials: a projected ServiceAccount token, and each replica holds its shard Lease', async () => {
    for (const x of await replicas()) {
      assert.ok(x.spec.volumes?.some((v) => v.name.startsWith('kube-api-access-') && v.projected !== undefined), `${x.metadata.name} has the projected token volume`);
    }
    const leases = await until('2 shard Leases held by the replica pods', async () => {
      const l = (await kube().get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=outprobe.io/shard`))['items'] as { spec: { holderIdentity?: string } }[];
      const holders = l.map((x) => x.spec.holderIdentity ?? '').filter((h) => h !== '');
      return holders.length === 2 ? holders : undefined;
    }, 60_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
    const names = (await replicas()).map((x) => x.metadata.name);
    for (const h of leases) assert.ok(names.some((n) => h.includes(n)), `Lease holder ${h} is a replica pod (${names.join(', ')})`);
  });

  it('helm test: the chart\'s own test Pod finds both replicas Ready, holding live Leases, answering /readyz, members of the fleet with no pod unowned', () => {
    const r = p.helm('test', RELEASE, '--namespace', NS, '--timeout', '3m', '--logs');
    process.stderr.write(`# helm test:\n${r.stdout}${r.stderr}`);
    assert.equal(r.status, 0, fail(`helm test failed: ${r.stderr}`));
    assert.match(r.stdout, /outprobe: 2 replicas Ready, members of the fleet, every pod owned/);
    assert.equal(r.stdout.match(/^ok: \S+ Ready, Lease live, \/readyz 200, members 2, unowned pods 0$/gm)?.length, 2, 'each replica checked');
  });

  it('webhook through its Service injects the gate; the real kubelet folds the readinessProbe and the gate into Ready', async () => {
    await kube().create(`/apis/outprobe.io/v1alpha1/namespaces/${APP_NS}/probepolicies`, {
      apiVersion: 'outprobe.io/v1alpha1', kind: 'ProbePolicy', metadata: { name: POLICY, namespace: APP_NS },
      // maxUnreadyPercent 100: the panic cap is per replica (ADR 0015); with 2 pods on 2 replicas the owner of the
      // cut pod may own only that pod, whose cap (50 % of 1) is 0, and it would fail open instead of writing False.
      spec: { selector: { matchLabels: { app: 'web' } }, mode: 'Enforce', readiness: { conditionType: GATE, maxUnreadyPercent: 100, probe: { fromContainer: 'readinessProbe' } } },
    });
    await deployWeb(p, { namespace: APP_NS, replicas: 2, nodes: [WORKLOAD_NODE], readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: PERIOD_S, failureThreshold: 3, timeoutSeconds: 1 } });
    const pods = await until('2 web pods Ready with the gate True', async () => {
      const ps = await webPods();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True' && condition(x, GATE) === 'True') ? ps : undefined;
    }, 120_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
    for (const x of pods) {
      assert.deepEqual(x.spec.readinessGates, [{ conditionType: GATE }], 'the API server called the webhook, which injected the gate');
      assert.equal(x.spec.nodeName, WORKLOAD_NODE);
    }
  });

  it('a pod cut off from the other nodes: kubelet ContainersReady stays True, outprobe\'s gate goes False, Ready False, kube-proxy stops sending to it, diverged 1', async () => {
    const pods = await webPods();
    const victim = pods[0];
    const other = pods[1];
    assert.ok(victim?.status.podIP !== undefined && other !== undefined);
    const net = p.cp.net;
    assert.ok(net !== undefined);
    const svc = await kube().get(`/api/v1/namespaces/${APP_NS}/services/web`);
    const clusterIp = (svc['spec'] as { clusterIP: string }).clusterIP;
    const clientNode = net.nodes.find((n) => n.kind === 'kwok');
    assert.ok(clientNode !== undefined);
    // A client on another node sends through its node's kube-proxy to the Service's ClusterIP.
    const client: ServiceClient = startServiceClient({ spawnIn: (ns, cmd, args, opts) => net.spawnIn(ns, cmd, args, opts), netns: clientNode.netns, ip: clusterIp, port: 80, intervalMs: 50, timeoutMs: 500 });
    try {
      await until('the client reaches both pods', () => {
        const seen = new Set(client.hits.map((h) => h.pod));
        return seen.has(victim.metadata.name) && seen.has(other.metadata.name) ? true : undefined;
      }, 30_000);
      const cutAt = Date.now();
      const fault = await net.faults.isolatePod(victim.status.podIP);
      try {
        await until('the gate False and Ready False while ContainersReady stays True', async () => {
          const x = (await webPods()).find((y) => y.metadata.uid === victim.metadata.uid);
          if (x === undefined) return undefined;
          assert.equal(condition(x, 'ContainersReady'), 'True', 'the kubelet on the pod\'s own node still reaches it');
          return condition(x, GATE) === 'False' && condition(x, 'Ready') === 'False' ? true : undefined;
        }, 60_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
        const readyFalseAt = Date.now();
        // One pod explained (issue 30 item 3, ADR 0067): the plugin port-forwards to each replica's loopback debug endpoint through the real kubelets.
        const ex = spawnSync(process.execPath, ['--no-warnings', `${REPO}src/cli/kubectl-outprobe.ts`, 'explain', `pod/${victim.metadata.name}`, '-n', APP_NS, '--outprobe-namespace', NS, '--kubectl', p.cp.binaries.kubectl, '--kubeconfig', p.cp.kubeconfigPath], { encoding: 'utf8', timeout: 60_000 });
        process.stderr.write(`# kubectl outprobe explain:\n${ex.stdout}${ex.stderr}`);
        assert.equal(ex.status, 0, fail(ex.stderr));
        assert.doesNotMatch(ex.stdout, /could not be asked/, 'both replicas answered through port-forward');
        assert.match(ex.stdout, /^Owner: +\S+ \(node real-node-[12]\)$/m);
        assert.match(ex.stdout, new RegExp(`^  ${GATE}: False ProbeFailed since \\S+$`, 'm'));
        assert.match(ex.stdout, /^ {4}state: committed failure; last result failure ×\d+ in a row \(confirmed failure\); on-hold no; failing since \S+$/m);
        const st = spawnSync(process.execPath, ['--no-warnings', `${REPO}src/cli/kubectl-outprobe.ts`, 'status', '--outprobe-namespace', NS, '--kubectl', p.cp.binaries.kubectl, '--kubeconfig', p.cp.kubeconfigPath], { encoding: 'utf8', timeout: 60_000 });
        process.stderr.write(`# kubectl outprobe status:\n${st.stdout}${st.stderr}`);
        assert.equal(st.status, 0, fail(st.stderr));
        assert.match(st.stdout, /^Replicas \(2 live members\):$/m);
        assert.equal(st.stdout.match(/^ {2}\S+ {2}node real-node-[12] {2}ready {2}pods \d+/gm)?.length, 2, 'both replicas report through port-forward');
        const status = await until('status.diverged 1', async () => {
          const s = (await kube().get(`/apis/outprobe.io/v1alpha1/namespaces/${APP_NS}/probepolicies/${POLICY}`))['status'] as Record<string, unknown> | undefined;
          return s?.['diverged'] === 1 ? s : undefined;
        }, 30_000);
        // kube-proxy removes the endpoint; from then on every request is answered, by the other pod.
        await sleep(3000);
        const settled = client.since(Date.now() - 2000);
        assert.ok(settled.length > 10, 'the client kept sending');
        assert.deepEqual(settled.filter((h) => h.pod !== other.metadata.name), [], 'after the endpoint left, only the reachable pod answers');
        process.stderr.write(`# cut → Ready False ${readyFalseAt - cutAt} ms; status ${JSON.stringify(status)}\n`);
      } finally {
        await fault.heal();
      }
      await until('healed: gate True, Ready True, diverged 0', async () => {
        const x = (await webPods()).find((y) => y.metadata.uid === victim.metadata.uid);
        const s = (await kube().get(`/apis/outprobe.io/v1alpha1/namespaces/${APP_NS}/probepolicies/${POLICY}`))['status'] as Record<string, unknown> | undefined;
        return x !== undefined && condition(x, GATE) === 'True' && condition(x, 'Ready') === 'True' && s?.['diverged'] === 0 ? true : undefined;
      }, 60_000);
    } finally {
      await client.stop();
    }
  });

  it('/metrics with a ServiceAccount token bound to the metrics reader: 200 with the second opinions the replicas asked each other; no token 401; the token revoked 401', async () => {
    await kube().create(`/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'scraper', namespace: NS } });
    const reader = ((await kube().get(`/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector=${encodeURIComponent(RELEASE_SELECTOR)}`))['items'] as { metadata: { name: string } }[])
      .map((r) => r.metadata.name).find((n) => n.endsWith('-metrics-reader'));
    assert.ok(reader !== undefined, 'the chart made a metrics-reader ClusterRole');
    await kube().create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'scraper-metrics' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: reader },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: NS }],
    });
    const tr = await kube().create(`/api/v1/namespaces/${NS}/serviceaccounts/scraper/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } });
    const token = (tr['status'] as { token: string }).token;
    const scrape = async (ip: string, auth?: string): Promise<{ status: number; body: string }> => {
      const res = await request(`http://${ip}:8080/metrics`, { headers: auth === undefined ? {} : { authorization: `Bearer ${auth}` }, signal: AbortSignal.timeout(5000) });
      return { status: res.statusCode, body: await res.body.text() };
    };
    const ips = (await replicas()).map((x) => x.status.podIP ?? '');
    let agreed = 0;
    for (const ip of ips) {
      const r = await until(`/metrics of ${ip} with the token`, async () => { const s = await scrape(ip, token); return s.status === 200 ? s : undefined; }, 30_000);
      const m = /^outprobe_second_opinions_total\{result="agreed"\} (\d+)/m.exec(r.body);
      agreed += Number(m?.[1] ?? 0);
      assert.equal((await scrape(ip)).status, 401, 'no token: 401');
    }
    assert.ok(agreed >= 1, 'the owner asked the other replica pod before writing the first False, and it agreed');
    const revokedAt = Date.now();
    await kube().delete(`/api/v1/namespaces/${NS}/serviceaccounts/scraper`);
    // Reviews are cached per token for 60 s (src/observability/metrics-auth.ts, as kube-rbac-proxy caches them).
    for (const ip of ips) {
      await until(`/metrics of ${ip} refusing the revoked token`, async () => ((await scrape(ip, token)).status === 401 ? true : undefined), 60_000 + 15_000, 1000);
    }
    process.stderr.write(`# the revoked token was refused by every replica ${Date.now() - revokedAt} ms after its ServiceAccount was deleted (review cache 60 s)\n`);
  });

  it('a write to the read-only root filesystem fails with EROFS and the replica keeps running', async () => {
    const x = (await replicas())[0];
    assert.ok(x !== undefined);
    const r = p.kubectl('exec', '-n', NS, x.metadata.name, '--', '/nodejs/bin/node', '-e', 'require("fs").writeFileSync("/app/src/x.ts", "")');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /EROFS: read-only file system/);
    const again = (await replicas()).find((y) => y.metadata.uid === x.metadata.uid);
    assert.equal(again?.status.containerStatuses?.[0]?.restartCount, 0);
  });

  it('a replica OOM-killed by its memory limit under load: the kubelet restarts it, no gate is left False, it rejoins', async () => {
    // The load runs inside the replica's own process: a module preloaded by NODE_OPTIONS (chart value extraEnv)
    // that, on SIGUSR2, allocates 8 MiB every 20 ms until the container's memory limit (256Mi here) is hit and the
    // kernel's OOM killer ends the process, as a replica whose memory grows under load would be ended.
    const load = 'process.on("SIGUSR2",()=>{const a=[];setInterval(()=>{a.push(Buffer.alloc(8<<20,1));},20);});';
    const env = [{ name: 'NODE_OPTIONS', value: `--import=data:text/javascript;base64,${Buffer.from(load).toString('base64')}` }];
    ok(p.helm('upgrade', RELEASE, CHART, '--namespace', NS, ...chartArgs(image, REPLICA_NODES), '--set', 'resources.requests.memory=128Mi', '--set', 'resources.limits.memory=256Mi',
      '--set-json', `extraEnv=${JSON.stringify(env)}`, '--wait', '--timeout', '5m'), 'helm upgrade with the load hook and a 256Mi limit');
    const x = await until('2 replicas Ready with the load hook', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((y) => condition(y, 'Ready') === 'True' && y.status.containerStatuses?.[0]?.containerID !== undefined) ? ps[0] : undefined;
    }, 180_000);
    const cid = x.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '') ?? '';
    const node = p.cp.realNodes.find((n) => n.node.name === x.spec.nodeName);
    assert.ok(node !== undefined);
    const tasks = ok(spawnSyncOk('ctr', ['--address', node.containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']), 'ctr tasks ls');
    const pid = Number(new RegExp(`^${cid}\\s+(\\d+)`, 'm').exec(tasks)?.[1]);
    assert.ok(pid > 0, `the replica's PID in ${tasks}`);
    const gatesFalse: string[] = [];
    const watching = { on: true };
    const watcher = (async () => {
      while (watching.on) {
        for (const w of await webPods()) if (condition(w, GATE) !== 'True') gatesFalse.push(`${w.metadata.name} ${condition(w, GATE) ?? 'none'}`);
        await sleep(200);
      }
    })();
    try {
      process.kill(pid, 'SIGUSR2');
      const killed = await until('the replica OOMKilled and restarted', async () => {
        const y = (await replicas()).find((z) => z.metadata.uid === x.metadata.uid);
        const cs = y?.status.containerStatuses?.[0];
        return cs !== undefined && cs.restartCount >= 1 && cs.lastState?.['terminated']?.reason === 'OOMKilled' ? cs : undefined;
      }, 120_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
      assert.equal(killed.lastState?.['terminated']?.exitCode, 137);
      await until('the restarted replica Ready and holding a Lease again', async () => {
        const y = (await replicas()).find((z) => z.metadata.uid === x.metadata.uid);
        const l = (await kube().get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=outprobe.io/shard`))['items'] as { spec: { holderIdentity?: string } }[];
        return y !== undefined && condition(y, 'Ready') === 'True' && l.some((z) => (z.spec.holderIdentity ?? '').includes(x.metadata.name)) ? true : undefined;
      }, 120_000);
    } finally {
      watching.on = false;
      await watcher;
    }
    assert.deepEqual(gatesFalse, [], 'no workload gate went False while a replica was down');
  });

  it('rolling update: the kubelet SIGTERMs each old replica, its Lease is released, no workload pod goes unprobed longer than 2 periods + 1 s', async () => {
    const before = await replicas();
    const since = new Date().toISOString();
    ok(p.kubectl('rollout', 'restart', '-n', NS, `deployment/${RELEASE}`), 'rollout restart');
    ok(p.kubectl('rollout', 'status', '-n', NS, `deployment/${RELEASE}`, '--timeout=300s'), 'rollout status');
    const after = await until('2 new replicas Ready', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True' && !before.some((b) => b.metadata.uid === x.metadata.uid)) ? ps : undefined;
    }, 120_000);
    // `rollout status` returns once the new replicas are available; the old ones may still be shutting down.
    await until('the old replicas gone', async () => {
      const all = (await kube().get(`/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(RELEASE_SELECTOR)}`))['items'] as PodJson[];
      return all.some((x) => before.some((b) => b.metadata.uid === x.metadata.uid)) ? undefined : true;
    }, 120_000);
    const leases = ((await kube().get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=outprobe.io/shard`))['items'] as { metadata: { name: string }; spec: { holderIdentity?: string } }[]);
    for (const b of before) {
      const held = leases.filter((l) => (l.spec.holderIdentity ?? '').includes(b.metadata.name));
      assert.deepEqual(held, [], `the old replica ${b.metadata.name} released its Lease`);
    }
    // Who probed each workload pod when: podserve logs every request with its source.
    const replicaIps = new Set([...before, ...after].map((x) => x.status.podIP));
    for (const w of await webPods()) {
      const logs = ok(p.kubectl('logs', '-n', APP_NS, w.metadata.name, `--since-time=${since}`), 'kubectl logs');
      const times = logs.split('\n').flatMap((l) => {
        const m = /^request t=(\d+) from=([\d.]+):\d+ /.exec(l);
        return m !== null && replicaIps.has(m[2]) ? [Number(m[1])] : [];
      });
      assert.ok(times.length > 5, `outprobe kept probing ${w.metadata.name}: ${times.length} probes`);
      const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
      const worst = Math.max(...gaps);
      process.stderr.write(`# ${w.metadata.name}: ${times.length} outprobe probes during the rollout, longest gap ${worst} ms\n`);
      assert.ok(worst <= 2 * PERIOD_S * 1000 + 1000, `${w.metadata.name} unprobed for ${worst} ms`);
    }
  });

  it('an image missing a file: the new replica fails with a clear error, the running ones keep their Leases and the gates stay True', async () => {
    const broken = await buildOutprobeImage({ repoDir: REPO, omit: ['/app/src/main.ts'] });
    for (const n of p.cp.realNodes) await importImage('ctr', n.containerdSocket, broken.archive);
    const running = await replicas();
    ok(p.helm('upgrade', RELEASE, CHART, '--namespace', NS, ...chartArgs(broken.name, REPLICA_NODES)), 'helm upgrade to the broken image');
    const failing = await until('the new replica\'s container to fail', async () => {
      const x = (await replicas()).find((y) => y.spec.containers[0]?.image === broken.name);
      const cs = x?.status.containerStatuses?.[0];
      const term = cs?.lastState?.['terminated'] ?? cs?.state?.['terminated'];
      return x !== undefined && term !== undefined ? { x, term } : undefined;
    }, 120_000);
    assert.notEqual(failing.term.exitCode, 0);
    const restarted = (failing.x.status.containerStatuses?.[0]?.restartCount ?? 0) > 0;
    const logs = p.kubectl('logs', '-n', NS, failing.x.metadata.name, ...(restarted ? ['--previous'] : []));
    assert.match(`${logs.stdout}${logs.stderr}`, /Cannot find module '\/app\/src\/main\.ts'/, 'node names the missing file');
    // The rollout waits (maxUnavailable 0): the running replicas stay Ready and keep probing.
    const still = await replicas();
    for (const r of running) assert.equal(condition(still.find((y) => y.metadata.uid === r.metadata.uid) ?? r, 'Ready'), 'True', `${r.metadata.name} still Ready`);
    for (const w of await webPods()) assert.equal(condition(w, GATE), 'True');
    ok(p.helm('upgrade', RELEASE, CHART, '--namespace', NS, ...chartArgs(image, REPLICA_NODES), '--wait', '--timeout', '5m'), 'helm upgrade back to the good image');
    await until('2 good replicas Ready', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True' && x.spec.containers[0]?.image === image) ? ps : undefined;
    }, 180_000);
  });

  it('metrics.tls on real kubelets: the kubelet\'s HTTPS probes keep the replicas Ready, helm test passes over verified TLS, an unauthenticated scrape is 401 and plain HTTP gets nothing', async () => {
    // ADR 0068/0069: an existing kubernetes.io/tls Secret (its ca.crt is what scrapers and helm test trust).
    const day = 86_400_000;
    const now = Date.now();
    const serverName = `${RELEASE}-metrics.${NS}.svc`;
    const ca = issueCertificate({ commonName: 'outprobe e2e-nodes metrics CA', notBefore: now - day, notAfter: now + 30 * day });
    const serving = issueCertificate({ commonName: serverName, names: [serverName, `${RELEASE}-metrics.${NS}`, `${RELEASE}-metrics`], notBefore: now - day, notAfter: now + 7 * day, issuer: ca });
    const b64 = (x: string): string => Buffer.from(x).toString('base64');
    await kube().create(`/api/v1/namespaces/${NS}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'metrics-tls', namespace: NS },
      data: { 'tls.crt': b64(serving.cert), 'tls.key': b64(serving.key), 'ca.crt': b64(ca.cert) },
    });
    ok(p.helm('upgrade', RELEASE, CHART, '--namespace', NS, ...chartArgs(image, REPLICA_NODES), '--set', 'metrics.tls.enabled=true', '--set', 'metrics.tls.existingSecret=metrics-tls',
      '--wait', '--timeout', '5m'), 'helm upgrade with metrics.tls');
    const pods = await until('2 replicas Ready by HTTPS probes', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True' && x.metadata.deletionTimestamp === undefined
        && x.spec.containers[0]?.readinessProbe?.httpGet?.scheme === 'HTTPS') ? ps : undefined;
    }, 180_000).catch((err: unknown) => { throw new Error(fail(String(err))); });
    const r = p.helm('test', RELEASE, '--namespace', NS, '--timeout', '3m', '--logs');
    process.stderr.write(`# helm test over metrics.tls:\n${r.stdout}${r.stderr}`);
    assert.equal(r.status, 0, fail(`helm test failed: ${r.stderr}`));
    assert.equal(r.stdout.match(/^ok: \S+ Ready, Lease live, \/readyz 200, members 2, unowned pods 0$/gm)?.length, 2, 'each replica checked over TLS');
    const get = (ip: string, scheme: 'http' | 'https'): Promise<number | string> => new Promise((resolve) => {
      const mod = scheme === 'https' ? httpsGet : httpGet;
      const req = mod({ host: ip, port: 8080, path: '/metrics', timeout: 5000, ...(scheme === 'https' ? { ca: ca.cert, servername: serverName } : {}) }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    for (const x of pods) {
      const ip = x.status.podIP ?? '';
      assert.equal(await get(ip, 'https'), 401, `${x.metadata.name}: verified TLS, no token: 401`);
      assert.equal(typeof await get(ip, 'http'), 'string', `${x.metadata.name}: plain HTTP gets no HTTP answer`);
    }
  });

  it('helm upgrade keeps the replicas; helm uninstall leaves every gate True and no Lease renewed', async () => {
    ok(p.helm('upgrade', RELEASE, CHART, '--namespace', NS, ...chartArgs(image, REPLICA_NODES), '--set', 'config.logLevel=debug', '--wait', '--timeout', '5m'), 'helm upgrade');
    await until('2 replicas Ready after the upgrade', async () => {
      const ps = await replicas();
      return ps.length === 2 && ps.every((x) => condition(x, 'Ready') === 'True') ? ps : undefined;
    }, 180_000);
    for (const w of await webPods()) assert.equal(condition(w, GATE), 'True');
    ok(p.helm('uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '3m'), 'helm uninstall');
    await until('no replica pod left', async () => ((await replicas()).length === 0 ? true : undefined), 120_000);
    // No Lease is renewed any more. helm deletes the release's Role with the Deployment, so a replica may lose the
    // right to delete its Lease before its SIGTERM handler runs: a Lease left then is reported here (it is inert:
    // membership reads its renewTime) and must not be renewed again.
    type LeaseJson = { metadata: { name: string }; spec: { renewTime?: string } };
    const leasesNow = async (): Promise<LeaseJson[]> => (await kube().get(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=outprobe.io/shard`))['items'] as LeaseJson[];
    const left = await leasesNow();
    if (left.length > 0) process.stderr.write(`# after helm uninstall, ${left.length} shard Lease(s) left behind: ${left.map((l) => l.metadata.name).join(', ')}\n`);
    await sleep(3000);
    const later = await leasesNow();
    for (const l of later) assert.equal(l.spec.renewTime, left.find((x) => x.metadata.name === l.metadata.name)?.spec.renewTime, `${l.metadata.name} is not renewed after the uninstall`);
    for (const w of await webPods()) {
      assert.equal(condition(w, GATE), 'True', `${w.metadata.name}: a gate outprobe stops managing is left True`);
      assert.equal(condition(w, 'Ready'), 'True');
    }
  });
});
