import type { ProbeKind } from '../kernel/index.ts';
import { probeKinds } from '../kernel/index.ts';

/** Where a replica answers second-opinion requests (on its health/metrics listener). */
export const secondOpinionPath = '/v1/second-opinion';

/** Larger request bodies are refused (413) unread: a request is three short strings. */
export const maxRequestBytes = 4096;

/**
 * What the asking replica sends: the policy and the pod by UID, never an
 * address or a port. The answering replica probes what its own informer says
 * about that pod, through the same planning and address guards as its own
 * probes, so the endpoint cannot be used to aim a probe anywhere.
 */
export interface SecondOpinionRequest {
  /** `<namespace>/<name>` of the ProbePolicy. */
  readonly policy: string;
  readonly podUid: string;
  readonly probe: ProbeKind;
}

export type SecondOpinionResult = 'success' | 'failure' | 'unknown';

export interface SecondOpinionAnswer {
  readonly result: SecondOpinionResult;
  /** The probe's output, or why the answer is unknown; at most 512 characters, no control characters. */
  readonly message: string;
}

const maxMessage = 512;
const policyKey = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;
const uid = /^[A-Za-z0-9-]{1,128}$/;

const own = (o: Record<string, unknown>, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

/** A request body as JSON, checked field by field (own keys only); a reason when it is malformed. */
export function parseRequest(raw: unknown): { readonly ok: true; readonly request: SecondOpinionRequest } | { readonly ok: false; readonly error: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, error: 'body must be a JSON object' };
  const o = raw as Record<string, unknown>;
  const policy = own(o, 'policy');
  const podUid = own(o, 'podUID');
  const probe = own(o, 'probe');
  if (typeof policy !== 'string' || policy.length > 317 || !policyKey.test(policy)) return { ok: false, error: 'policy must be "<namespace>/<name>"' };
  if (typeof podUid !== 'string' || !uid.test(podUid)) return { ok: false, error: 'podUID must be a pod UID' };
  if (typeof probe !== 'string' || !(probeKinds as readonly string[]).includes(probe)) return { ok: false, error: 'probe must be readiness, liveness or startup' };
  return { ok: true, request: { policy, podUid, probe: probe as ProbeKind } };
}

/** The wire form of a request (`podUID`, as Kubernetes spells it). */
export function requestBody(r: SecondOpinionRequest): string {
  return JSON.stringify({ policy: r.policy, podUID: r.podUid, probe: r.probe });
}

/** A message cut to 512 characters, control characters replaced (it ends up in an Event). */
export function cleanMessage(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, ' ').trim().slice(0, maxMessage);
}

/** An answer body; undefined when malformed (the asker treats that as an error). */
export function parseAnswer(raw: unknown): SecondOpinionAnswer | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const result = own(o, 'result');
  const message = own(o, 'message');
  if (result !== 'success' && result !== 'failure' && result !== 'unknown') return undefined;
  return { result, message: typeof message === 'string' ? cleanMessage(message) : '' };
}
