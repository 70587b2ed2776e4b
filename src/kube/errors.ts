/**
 * Typed Kubernetes API errors. Callers branch on `code` (stable), never on
 * message text. `retryable` says whether the same call may be sent again
 * after a backoff; `retryAfterMs` carries the server's Retry-After.
 */
export const kubeErrorCodes = [
  'BadRequest',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'Conflict',
  'Gone',
  'Invalid',
  'TooManyRequests',
  'ServerError',
  'Unavailable',
  'Timeout',
  'Network',
  'Unknown',
] as const;
export type KubeErrorCode = (typeof kubeErrorCodes)[number];

/** One field error of a Status (`details.causes[]`), e.g. `{reason: 'FieldValueInvalid', field: 'metadata.uid'}`. */
export interface StatusCause {
  readonly reason: string;
  readonly field: string;
  readonly message: string;
}

/** The causes of a Status object as the API server sends them (any missing part is `''`). */
export function statusCauses(details: unknown): StatusCause[] {
  const causes = (details as { causes?: unknown } | null | undefined)?.causes;
  if (!Array.isArray(causes)) return [];
  return causes.map((c: unknown) => {
    const o = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
    const text = (k: string): string => (typeof o[k] === 'string' ? o[k] : '');
    return { reason: text('reason'), field: text('field'), message: text('message') };
  });
}

export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly code: KubeErrorCode;
  readonly status: number;
  /** The Status object's `reason`, e.g. `AlreadyExists`, `Expired`. */
  readonly reason: string;
  readonly retryAfterMs: number | undefined;
  /** The Status object's `details.causes` (field errors of a 422), `[]` when none. */
  readonly causes: readonly StatusCause[];
  /** API Priority and Fairness: the `X-Kubernetes-PF-PriorityLevel-UID` response header (`''` when absent). */
  readonly priorityLevelUid: string;
  /** The `X-Kubernetes-PF-FlowSchema-UID` response header (`''` when absent). */
  readonly flowSchemaUid: string;

  constructor(init: {
    code: KubeErrorCode;
    status: number;
    reason: string;
    message: string;
    retryAfterMs?: number;
    causes?: readonly StatusCause[];
    priorityLevelUid?: string;
    flowSchemaUid?: string;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.reason = init.reason;
    this.retryAfterMs = init.retryAfterMs;
    this.causes = init.causes ?? [];
    this.priorityLevelUid = init.priorityLevelUid ?? '';
    this.flowSchemaUid = init.flowSchemaUid ?? '';
  }

  get retryable(): boolean {
    return this.code === 'TooManyRequests' || this.code === 'ServerError' || this.code === 'Unavailable' || this.code === 'Timeout' || this.code === 'Network';
  }
}

export function codeForStatus(status: number): KubeErrorCode {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'Unavailable';
    case 504:
      return 'Timeout';
    default:
      return status >= 500 ? 'ServerError' : 'Unknown';
  }
}

/** Retry-After in seconds (the apiserver sends integers) → ms. */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const seconds = Number(v);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

export function isKubeError(err: unknown, code?: KubeErrorCode): err is KubeApiError {
  return err instanceof KubeApiError && (code === undefined || err.code === code);
}
