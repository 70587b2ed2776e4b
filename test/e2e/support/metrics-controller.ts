// The controller as a pod runs it, for the /metrics e2e tests (metrics-auth, metrics-tls):
// only its ServiceAccount's token, its metrics on a port of its own, no sharding.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ControlPlane } from '../../support/cluster/index.ts';
import { waitFor } from '../../integration/support/fake-kubelet.ts';

const mainPath = fileURLToPath(new URL('../../../src/main.ts', import.meta.url));

export interface MetricsController {
  readonly child: ChildProcess;
  /** The metrics port it logged in `outprobe started`. */
  readonly port: number;
  /** Every line of its stdout and stderr so far (it keeps growing). */
  readonly lines: readonly string[];
}

/**
 * Starts the controller with a kubeconfig holding only `token` (the ServiceAccount's, in
 * namespace `namespace`), `--metrics-addr 127.0.0.1:0 --metrics-auth kubernetes --sharding
 * false` and `extraArgs`; resolves once it logged its metrics port. `record` keeps its output
 * for the logs-on-failure harness.
 */
export async function startMetricsController(o: {
  readonly cp: ControlPlane;
  readonly dir: string;
  readonly namespace: string;
  readonly token: string;
  readonly record: (name: string, child: ChildProcess) => void;
  readonly extraArgs?: readonly string[];
}): Promise<MetricsController> {
  const admin = o.cp.kubeconfig as { clusters: { cluster: Record<string, unknown> }[] };
  const kubeconfig = path.join(o.dir, 'sa-kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'sa',
    clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
    users: [{ name: 'sa', user: { token: o.token } }],
    contexts: [{ name: 'sa', context: { cluster: 'c', user: 'sa', namespace: o.namespace } }],
  }), { mode: 0o600 });
  const child = spawn(process.execPath, [mainPath, '--kubeconfig', kubeconfig, '--metrics-addr', '127.0.0.1:0', '--metrics-auth', 'kubernetes', '--sharding', 'false', ...(o.extraArgs ?? [])],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', POD_NAME: 'outprobe-metrics-0', POD_NAMESPACE: o.namespace } });
  o.record('outprobe', child);
  const lines: string[] = [];
  let port = 0;
  for (const s of [child.stdout, child.stderr]) {
    createInterface({ input: s }).on('line', (l) => {
      lines.push(l);
      const m = /"msg":"outprobe started".*"metricsPort":(\d+)/.exec(l);
      if (m !== null) port = Number(m[1]);
    });
  }
  await waitFor('controller started', () => Promise.resolve(port !== 0), 30_000);
  return { child, port, lines };
}
