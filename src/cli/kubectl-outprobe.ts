/**
 * `kubectl outprobe`: explain one pod, or show the fleet (issue 30 item 3,
 * ADR 0067). Everything is read with the caller's own kubeconfig: the pod,
 * the policies, the shard Leases and outprobe's Events through the API; each
 * replica's loopback debug endpoint through `kubectl port-forward`, which the
 * caller's RBAC authorises (`create pods/portforward` in outprobe's
 * namespace). A caller without that right still gets the API part.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { systemClock, systemRandom } from '../kernel/index.ts';
import { KubeClient, loadConnection } from '../kube/index.ts';
import { decodeClaim, isLive, projectLease, shardLabel } from '../sharding/index.ts';
import type { ShardLease } from '../sharding/index.ts';
import { matchesSelector } from '../targets/index.ts';
import { printExplain, printStatus } from '../explain/index.ts';
import type { ApiView, FleetReport, PodReport, ReplicaAnswer } from '../explain/index.ts';

const usage = `Usage:
  kubectl outprobe explain pod/NAME [-n NAMESPACE] [options]
  kubectl outprobe status [options]

Options:
  -n, --namespace NS            the pod's namespace (default: the context's, else "default")
      --outprobe-namespace NS   where outprobe runs (default "outprobe")
      --debug-port PORT         the replicas' --debug-addr port (default 9446)
      --replica-url ID=URL      ask this replica at URL instead of port-forwarding (repeatable; development and tests)
      --no-port-forward         read through the API only (no replica state)
      --kubectl PATH            the kubectl that port-forwards (default: kubectl on PATH)
      --kubeconfig PATH, --context NAME
  -o, --output text|json        (default text)
`;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): string => (typeof v === 'number' ? String(v) : '?');

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      'outprobe-namespace': { type: 'string', default: 'outprobe' },
      'debug-port': { type: 'string', default: '9446' },
      'replica-url': { type: 'string', multiple: true },
      'no-port-forward': { type: 'boolean', default: false },
      kubectl: { type: 'string', default: 'kubectl' },
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'text' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, target] = positionals;
  if (values.help || command === undefined) {
    process.stdout.write(usage);
    return values.help ? 0 : 2;
  }
  const connection = loadConnection({ kubeconfig: values.kubeconfig, context: values.context });
  const client = new KubeClient({ connection, clock: systemClock, random: systemRandom, qps: 20, burst: 40, userAgent: 'kubectl-outprobe' });
  const replicas = new Replicas({ urls: values['replica-url'] ?? [], portForward: !values['no-port-forward'], namespace: values['outprobe-namespace'], port: Number(values['debug-port']), kubectl: values.kubectl, kubeconfig: values.kubeconfig, context: values.context });
  try {
    if (command === 'explain') {
      if (target === undefined) throw new Error('explain needs a pod: kubectl outprobe explain pod/NAME -n NAMESPACE');
      const name = target.replace(/^(pods?|po)\//, '');
      const ns = values.namespace ?? connection.namespace;
      const api = await apiView(client, ns, name, values['outprobe-namespace']);
      const answers = await replicas.ask<PodReport>(api.members.map((m) => m.identity), `/debug/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);
      process.stdout.write(values.output === 'json' ? `${JSON.stringify({ api, replicas: answers }, null, 2)}\n` : printExplain(api, answers));
      return 0;
    }
    if (command === 'status') {
      const members = await liveMembers(client, values['outprobe-namespace']);
      const answers = await replicas.ask<FleetReport>(members.map((m) => m.identity), '/debug/fleet');
      const policies = await policyRows(client);
      process.stdout.write(values.output === 'json' ? `${JSON.stringify({ members, replicas: answers, policies }, null, 2)}\n` : printStatus(members, answers, policies));
      return 0;
    }
    process.stderr.write(`unknown command ${command}\n${usage}`);
    return 2;
  } finally {
    replicas.close();
    await client.close();
  }
}

/** The pod, the policies selecting it, the live members and outprobe's Events about the pod, through the API. */
async function apiView(client: KubeClient, ns: string, name: string, outprobeNs: string): Promise<ApiView> {
  const raw = await client.request<Json>({ method: 'GET', path: `/api/v1/namespaces/${ns}/pods/${name}` });
  const meta = obj(raw['metadata']);
  const spec = obj(raw['spec']);
  const status = obj(raw['status']);
  const labels = obj(meta['labels']) as Record<string, string>;
  const uid = str(meta['uid']) ?? '';
  const pod = {
    namespace: ns,
    name,
    uid,
    node: str(spec['nodeName']) ?? null,
    ip: str(status['podIP']) ?? null,
    phase: str(status['phase']) ?? 'Unknown',
    gates: arr(spec['readinessGates']).map((g) => str(obj(g)['conditionType']) ?? '').filter((g) => g !== ''),
    conditions: arr(status['conditions']).map((c) => {
      const o = obj(c);
      return { type: str(o['type']) ?? '', status: str(o['status']) ?? '', ...optional(o, 'reason'), ...optional(o, 'message'), ...optional(o, 'lastTransitionTime') };
    }),
  };
  const list = await client.request<Json>({ method: 'GET', path: `/apis/outprobe.io/v1alpha1/namespaces/${ns}/probepolicies` });
  const policies = arr(list['items']).flatMap((item) => {
    const p = obj(item);
    const sel = obj(obj(p['spec'])['selector']);
    const selector = { matchLabels: obj(sel['matchLabels']) as Record<string, string>, matchExpressions: arr(sel['matchExpressions']) as never[] };
    if (!matchesSelector(labels, selector)) return [];
    return [{ key: `${ns}/${str(obj(p['metadata'])['name']) ?? ''}`, summary: policySummary(p) }];
  });
  const events = await client.request<Json>({ method: 'GET', path: `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.uid=${uid}`)}` });
  const ours = arr(events['items'])
    .map(obj)
    .filter((e) => str(obj(e['source'])['component']) === 'outprobe' || str(e['reportingComponent']) === 'outprobe')
    .map((e) => ({ at: str(e['lastTimestamp']) ?? str(e['eventTime']) ?? str(obj(e['metadata'])['creationTimestamp']) ?? '', reason: str(e['reason']) ?? '', message: str(e['message']) ?? '', from: str(e['reportingInstance']) ?? str(obj(e['source'])['host']) ?? '' }))
    .sort((a, b) => a.at.localeCompare(b.at))
    .slice(-8);
  return { pod, policies, members: await liveMembers(client, outprobeNs), events: ours };
}

function optional(o: Json, k: string): Record<string, string> {
  const v = str(o[k]);
  return v === undefined ? {} : { [k]: v };
}

function policySummary(p: Json): string {
  const spec = obj(p['spec']);
  const parts = [str(spec['mode']) ?? 'Enforce'];
  const readiness = obj(spec['readiness']);
  if (Object.keys(readiness).length > 0) parts.push(`readiness gate ${str(readiness['conditionType']) ?? '(default type)'}`);
  if (Object.keys(obj(spec['liveness'])).length > 0) parts.push('liveness');
  if (Object.keys(obj(spec['startup'])).length > 0) parts.push('startup');
  const ready = arr(obj(p['status'])['conditions']).map(obj).find((c) => c['type'] === 'Ready');
  if (ready !== undefined && ready['status'] !== 'True') parts.push(`NOT READY: ${str(ready['reason']) ?? ''} ${str(ready['message']) ?? ''}`.trim());
  return parts.join(', ');
}

/** Live members from the shard Leases, with the node and zone their claims declare. */
async function liveMembers(client: KubeClient, ns: string): Promise<ApiView['members']> {
  const list = await client.request<Json>({ method: 'GET', path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases?labelSelector=${encodeURIComponent(`${shardLabel}=true`)}` });
  const now = Date.now();
  const leases: ShardLease[] = arr(list['items']).map((l) => projectLease(l as never));
  return leases
    .filter((l) => isLive(l, now))
    .map((l) => {
      const claim = decodeClaim(l.member);
      return { identity: l.holder, node: claim?.nodeName ?? null, zone: claim?.zone ?? null };
    })
    .sort((a, b) => a.identity.localeCompare(b.identity));
}

async function policyRows(client: KubeClient): Promise<{ key: string; status: string; ready: string; failing: string; notes: string[] }[]> {
  const list = await client.request<Json>({ method: 'GET', path: '/apis/outprobe.io/v1alpha1/probepolicies' });
  return arr(list['items']).map((item) => {
    const p = obj(item);
    const meta = obj(p['metadata']);
    const status = obj(p['status']);
    const conditions = arr(status['conditions']).map(obj);
    const ready = conditions.find((c) => c['type'] === 'Ready');
    const notes = conditions.filter((c) => c['type'] !== 'Ready' && c['status'] === 'True').map((c) => `${str(c['type']) ?? ''}: ${str(c['message']) ?? ''}`);
    return { key: `${str(meta['namespace']) ?? ''}/${str(meta['name']) ?? ''}`, status: str(ready?.['reason']) ?? '(no status yet)', ready: `${num(status['ready'])}/${num(status['pods'])}`, failing: num(status['failing']), notes };
  });
}

/** The replicas' debug endpoints: given URLs, or one `kubectl port-forward` per replica pod. */
interface ReplicasOptions {
  readonly urls: readonly string[];
  readonly portForward: boolean;
  readonly namespace: string;
  readonly port: number;
  readonly kubectl: string;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
}

class Replicas {
  readonly #o: ReplicasOptions;
  readonly #children: ChildProcess[] = [];

  constructor(o: ReplicasOptions) {
    this.#o = o;
  }

  async ask<T>(identities: readonly string[], path: string): Promise<ReplicaAnswer<T>[]> {
    const given = new Map(this.#o.urls.map((u) => [u.slice(0, u.indexOf('=')), u.slice(u.indexOf('=') + 1)] as const));
    const ids = given.size > 0 ? [...given.keys()] : this.#o.portForward ? identities : [];
    return Promise.all(
      ids.map(async (identity): Promise<ReplicaAnswer<T>> => {
        try {
          const base = given.get(identity) ?? (await this.#forward(identity));
          const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000) });
          if (!res.ok) return { identity, error: `HTTP ${res.status}` };
          return { identity, report: (await res.json()) as T };
        } catch (err: unknown) {
          return { identity, error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }

  /** `kubectl port-forward -n NS pod/ID :PORT`, read until it says where it listens. */
  #forward(identity: string): Promise<string> {
    const args = ['port-forward', '-n', this.#o.namespace, `pod/${identity}`, `:${this.#o.port}`];
    if (this.#o.kubeconfig !== undefined) args.push('--kubeconfig', this.#o.kubeconfig);
    if (this.#o.context !== undefined) args.push('--context', this.#o.context);
    const child = spawn(this.#o.kubectl, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#children.push(child);
    return new Promise((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`kubectl port-forward gave no port in 10 s ${err.trim()}`)), 10_000);
      child.stdout.on('data', (b: Buffer) => {
        const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(b.toString());
        if (m !== null) {
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${m[1] ?? ''}`);
        }
      });
      child.stderr.on('data', (b: Buffer) => (err += b.toString()));
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('exit', () => {
        clearTimeout(timer);
        reject(new Error(`kubectl port-forward ended: ${err.trim() || 'no output'}`));
      });
    });
  }

  close(): void {
    for (const c of this.#children) c.kill();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`kubectl-outprobe: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
