import { decideInjection } from './mutate.ts';
import type { InjectionView, PodShape, SkipReason } from './mutate.ts';

/** How one AdmissionReview was answered (bounded, for the metric). */
export type ReviewResult = 'injected' | SkipReason | 'not_pod_create' | 'malformed';

export interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: {
    readonly uid: string;
    readonly allowed: true;
    readonly patchType?: 'JSONPatch';
    readonly patch?: string;
  };
}

export interface ReviewAnswer {
  readonly body: AdmissionReviewResponse;
  readonly result: ReviewResult;
  /** The gates added (empty unless injected). */
  readonly gates: readonly string[];
}

type Obj = Readonly<Record<string, unknown>>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(o: Obj | undefined, key: string): unknown {
  return o !== undefined && Object.hasOwn(o, key) ? o[key] : undefined;
}

/** String-valued own entries only: a label map is whatever the request says it is. */
function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!isObj(v)) return out;
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

/** The pod in a CREATE request, or undefined when the request is not one we act on. */
function podOf(request: Obj): PodShape | undefined {
  const object = own(request, 'object');
  if (!isObj(object)) return undefined;
  const metadata = own(object, 'metadata');
  const spec = own(object, 'spec');
  if (!isObj(spec)) return undefined;
  const ns = own(request, 'namespace');
  const metaNs = isObj(metadata) ? own(metadata, 'namespace') : undefined;
  const namespace = typeof ns === 'string' && ns !== '' ? ns : metaNs;
  if (typeof namespace !== 'string' || namespace === '') return undefined;
  const list = own(spec, 'readinessGates');
  const gates = Array.isArray(list) ? list.flatMap((g) => (isObj(g) && typeof own(g, 'conditionType') === 'string' ? [own(g, 'conditionType') as string] : [])) : [];
  return { namespace, labels: stringMap(isObj(metadata) ? own(metadata, 'labels') : undefined), gates, hasGateList: Array.isArray(list) };
}

function isPodCreate(request: Obj): boolean {
  const kind = own(request, 'kind');
  const sub = own(request, 'subResource');
  return own(request, 'operation') === 'CREATE' && isObj(kind) && own(kind, 'group') === '' && own(kind, 'kind') === 'Pod' && (sub === undefined || sub === '');
}

function answer(uid: string, result: ReviewResult, patch?: string, gates: readonly string[] = []): ReviewAnswer {
  const response = patch === undefined ? { uid, allowed: true as const } : { uid, allowed: true as const, patchType: 'JSONPatch' as const, patch };
  return { body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }, result, gates };
}

/**
 * Answers one AdmissionReview v1 (parsed JSON). Always allowed: the webhook
 * only ever adds readiness gates and never denies; a request it cannot read
 * is answered allowed without a patch.
 */
export function reviewPodCreate(review: unknown, view: InjectionView): ReviewAnswer {
  const request = isObj(review) ? own(review, 'request') : undefined;
  if (!isObj(request)) return answer('', 'malformed');
  const rawUid = own(request, 'uid');
  const uid = typeof rawUid === 'string' ? rawUid : '';
  if (uid === '') return answer('', 'malformed');
  if (!isPodCreate(request)) return answer(uid, 'not_pod_create');
  const pod = podOf(request);
  if (pod === undefined) return answer(uid, 'malformed');
  const decision = decideInjection(pod, view);
  if (decision.kind === 'skip') return answer(uid, decision.reason);
  return answer(uid, 'injected', Buffer.from(JSON.stringify(decision.patch)).toString('base64'), decision.gates);
}
