/**
 * `node src/release-gates.ts`: releases every readiness gate outprobe wrote
 * and left not True (issue 30, ADR 0035). The chart's pre-delete hook runs it
 * on `helm uninstall` (values `uninstall.releaseGates`); an operator may run it
 * by hand while every replica is down (docs/operations.md).
 *
 *   --controller NS/NAME  scale this Deployment to 0 first and wait for its pods
 *                         to go, so no replica writes a gate False afterwards
 *   --wait-seconds N      how long to wait for them (default 60); then it releases anyway
 *   --namespaces a,b      only these namespaces (default: all)
 *   --kubeconfig, --context, --dry-run
 *
 * Only over what outprobe wrote: a condition whose reason is not outprobe's
 * is never touched, and each write is a JSON patch guarded by the pod's uid
 * and resourceVersion (a condition changed after the read makes it fail; the
 * pod is read again). Exits 1 when a write still failed.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ownReasons, rfc3339 } from './controller/conditions.ts';
import { planUninstall } from './failopen/index.ts';
import type { PodJsonView } from './failopen/index.ts';
import { systemClock, systemRandom } from './kernel/index.ts';
import { KubeClient, isKubeError, loadConnection } from './kube/index.ts';

interface Totals {
  pods: number;
  released: number;
  foreign: number;
  failed: number;
}

const log = (msg: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
};

async function stopController(client: KubeClient, ref: string, waitSeconds: number): Promise<void> {
  const [namespace, name] = ref.split('/');
  if (namespace === undefined || name === undefined || name === '') throw new Error(`--controller must be NAMESPACE/NAME, got ${ref}`);
  const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`;
  let selector: Record<string, string>;
  try {
    const d = await client.request<{ spec?: { selector?: { matchLabels?: Record<string, string> } } }>({ method: 'GET', path });
    selector = d.spec?.selector?.matchLabels ?? {};
    await client.request({ method: 'PATCH', path: `${path}/scale`, patch: 'merge', body: { spec: { replicas: 0 } }, retry: true });
  } catch (err: unknown) {
    if (!isKubeError(err, 'NotFound')) throw err;
    log('the controller Deployment is gone already', { deployment: ref });
    return;
  }
  const labelSelector = Object.entries(selector).map(([k, v]) => `${k}=${v}`).join(',');
  log('scaled the controller to 0; waiting for its pods to go', { deployment: ref, labelSelector, waitSeconds });
  const deadline = Date.now() + waitSeconds * 1000;
  while (labelSelector !== '') {
    const list = await client.request<{ items?: unknown[] }>({ method: 'GET', path: `/api/v1/namespaces/${namespace}/pods`, query: { labelSelector } });
    const left = list.items?.length ?? 0;
    if (left === 0) return;
    if (Date.now() > deadline) {
      log('controller pods still present after --wait-seconds: releasing anyway (a replica still running may write a gate False again)', { left });
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function* podPages(client: KubeClient, namespaces: readonly string[]): AsyncGenerator<PodJsonView> {
  for (const ns of namespaces.length === 0 ? [undefined] : namespaces) {
    let cont: string | undefined;
    do {
      const page = await client.request<{ items?: PodJsonView[]; metadata?: { continue?: string } }>({
        method: 'GET',
        path: ns === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${ns}/pods`,
        query: { limit: 500, continue: cont },
      });
      yield* page.items ?? [];
      cont = page.metadata?.continue || undefined;
    } while (cont !== undefined);
  }
}

/** Releases one pod's gates; on a conflict (the pod changed since it was read) reads it again, up to 5 times. */
async function releasePod(client: KubeClient, first: PodJsonView, totals: Totals, dryRun: boolean): Promise<void> {
  let pod: PodJsonView | undefined = first;
  const path = `/api/v1/namespaces/${first.metadata?.namespace ?? ''}/pods/${first.metadata?.name ?? ''}`;
  for (let attempt = 0; attempt < 5 && pod !== undefined; attempt++) {
    const plan = planUninstall(pod, ownReasons, rfc3339(Date.now()));
    if (attempt === 0) totals.foreign += plan.foreign.length;
    if (plan.patch === null) return;
    if (dryRun) {
      log('would release', { pod: path, gates: plan.released });
      totals.released += plan.released.length;
      return;
    }
    if (await patched(client, path, plan.patch)) {
      totals.released += plan.released.length;
      log('released', { pod: path, gates: plan.released });
      return;
    }
    // A test op failed: the pod changed since it was read (or is gone). Read it again and decide again.
    pod = await reread(client, path, first.metadata?.uid);
  }
  if (pod === undefined) return;
  totals.failed++;
  log('gave up on a pod that kept changing', { pod: path });
}

/** True when the patch applied; false when its guard refused it (the pod changed) or the pod is gone. */
async function patched(client: KubeClient, path: string, patch: readonly unknown[]): Promise<boolean> {
  try {
    await client.request({ method: 'PATCH', path: `${path}/status`, patch: 'json', body: patch, retry: true });
    return true;
  } catch (err: unknown) {
    if (isKubeError(err, 'NotFound') || isKubeError(err, 'Invalid') || isKubeError(err, 'Conflict')) return false;
    throw err;
  }
}

/** The pod as it is now, if it is still the same pod. */
async function reread(client: KubeClient, path: string, uid: string | undefined): Promise<PodJsonView | undefined> {
  try {
    const again = await client.request<PodJsonView>({ method: 'GET', path });
    return again.metadata?.uid === uid ? again : undefined;
  } catch (err: unknown) {
    if (isKubeError(err, 'NotFound')) return undefined;
    throw err;
  }
}

export async function releaseGates(argv: readonly string[]): Promise<Totals> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      namespaces: { type: 'string', default: '' },
      controller: { type: 'string' },
      'wait-seconds': { type: 'string', default: '60' },
      'dry-run': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const client = new KubeClient({
    connection: loadConnection({ kubeconfig: values.kubeconfig, context: values.context }),
    clock: systemClock,
    random: systemRandom,
    qps: 20,
    burst: 40,
    userAgent: 'outprobe/release-gates',
  });
  try {
    if (values.controller !== undefined && !values['dry-run']) await stopController(client, values.controller, Number(values['wait-seconds']));
    const namespaces = values.namespaces.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const totals: Totals = { pods: 0, released: 0, foreign: 0, failed: 0 };
    for await (const pod of podPages(client, namespaces)) {
      totals.pods++;
      try {
        await releasePod(client, pod, totals, values['dry-run']);
      } catch (err: unknown) {
        totals.failed++;
        log('release failed', { pod: `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`, error: String(err) });
      }
    }
    log('done', { ...totals });
    return totals;
  } finally {
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  releaseGates(process.argv.slice(2)).then(
    (t) => process.exit(t.failed > 0 ? 1 : 0),
    (err: unknown) => {
      log('release-gates failed', { error: String(err) });
      process.exit(2);
    },
  );
}
