import { cleanMessage } from '../secondopinion/index.ts';

/** Where a replica takes the verdicts of a pod's other vantages (its peer port, ADR 0037). */
export const vantageReportPath = '/v1/vantage-reports';

/** At most this many verdicts per request (a sender splits larger batches). */
export const maxReportsPerRequest = 500;

/** Larger bodies are refused (413) unread: 500 verdicts of at most ~900 bytes each. */
export const maxReportBytes = 512 * 1024;

/** One vantage's verdict on one pod's readiness under one policy: its state machine's committed result. */
export interface VantageReport {
  /** `<namespace>/<name>` of the ProbePolicy. */
  readonly policy: string;
  readonly podUid: string;
  /** `unknown`: no committed result (yet): the vantage abstains. */
  readonly result: 'success' | 'failure' | 'unknown';
  /** The last probe output behind a failure (at most 512 characters). */
  readonly message: string;
}

/** What a vantage sends to a pod's owner: who it is (checked against the caller's address) and its verdicts. */
export interface ReportBatch {
  readonly from: string;
  readonly reports: readonly VantageReport[];
}

const policyKey = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;
const uid = /^[A-Za-z0-9-]{1,128}$/;
const own = (o: Record<string, unknown>, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

export function batchBody(b: ReportBatch): string {
  return JSON.stringify({ from: b.from, reports: b.reports.map((r) => ({ policy: r.policy, podUID: r.podUid, result: r.result, message: r.message })) });
}

/** One report of a batch, checked field by field; a reason when malformed. */
function parseReport(item: unknown): VantageReport | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'a report must be an object';
  const r = item as Record<string, unknown>;
  const policy = own(r, 'policy');
  const podUid = own(r, 'podUID');
  const result = own(r, 'result');
  const message = own(r, 'message');
  if (typeof policy !== 'string' || policy.length > 317 || !policyKey.test(policy)) return 'policy must be "<namespace>/<name>"';
  if (typeof podUid !== 'string' || !uid.test(podUid)) return 'podUID must be a pod UID';
  if (result !== 'success' && result !== 'failure' && result !== 'unknown') return 'result must be success, failure or unknown';
  return { policy, podUid, result, message: typeof message === 'string' ? cleanMessage(message) : '' };
}

/** A batch as JSON, checked field by field; a reason when malformed (the whole batch is refused). */
export function parseBatch(raw: unknown): { readonly ok: true; readonly batch: ReportBatch } | { readonly ok: false; readonly error: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, error: 'body must be a JSON object' };
  const o = raw as Record<string, unknown>;
  const from = own(o, 'from');
  const list = own(o, 'reports');
  if (typeof from !== 'string' || from === '' || from.length > 253) return { ok: false, error: 'from must be a replica identity' };
  if (!Array.isArray(list) || list.length > maxReportsPerRequest) return { ok: false, error: `reports must be a list of at most ${maxReportsPerRequest}` };
  const reports: VantageReport[] = [];
  for (const item of list as unknown[]) {
    const r = parseReport(item);
    if (typeof r === 'string') return { ok: false, error: r };
    reports.push(r);
  }
  return { ok: true, batch: { from, reports } };
}
