// A small Kubernetes REST client for tests: one shared undici Agent carrying the
// admin client certificate (no per-request TLS setup), JSON in and out, and a
// streaming watch. The controller's own client lives in src/kube; this is test support.
import { Agent, request } from 'undici';
import type { AdminCredentials } from './kubeconfig.ts';

export interface KubeResponse {
  readonly status: number;
  readonly body: unknown;
}

export type PatchType = 'merge' | 'strategic' | 'json';
const PATCH_CT: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
};

export interface WatchEvent {
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export class KubeClient {
  readonly server: string;
  readonly #agent: Agent;

  constructor(creds: AdminCredentials) {
    this.server = creds.server;
    this.#agent = new Agent({
      allowH2: false,
      connect: { ca: creds.caPem, cert: creds.certPem, key: creds.keyPem },
    });
  }

  /** Any request; non-2xx statuses are returned, not thrown. */
  async call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeResponse> {
    const res = await request(`${this.server}${path}`, {
      method: method as 'GET',
      dispatcher: this.#agent,
      headers: { accept: 'application/json', 'content-type': contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON (e.g. /readyz) */ }
    return { status: res.statusCode, body: parsed };
  }

  /** Like call() but throws unless the status is 2xx (or listed in `ok`). */
  async must(method: string, path: string, body?: unknown, ok: readonly number[] = []): Promise<Record<string, unknown>> {
    const r = await this.call(method, path, body);
    if ((r.status < 200 || r.status > 299) && !ok.includes(r.status)) {
      throw new Error(`${method} ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    }
    return (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
  }

  get(path: string): Promise<Record<string, unknown>> { return this.must('GET', path); }
  create(path: string, obj: unknown): Promise<Record<string, unknown>> { return this.must('POST', path, obj); }
  delete(path: string, opts?: unknown): Promise<Record<string, unknown>> { return this.must('DELETE', path, opts, [404]); }

  async patch(path: string, patch: unknown, type: PatchType = 'merge'): Promise<Record<string, unknown>> {
    const r = await this.call('PATCH', path, patch, PATCH_CT[type]);
    if (r.status < 200 || r.status > 299) throw new Error(`PATCH ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body as Record<string, unknown>;
  }

  /**
   * One watch stream from `resourceVersion` (path without query string, plus extra
   * query). Resolves when the server ends the stream or `signal` aborts it.
   */
  async watch(path: string, query: string, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    const res = await request(`${this.server}${path}?watch=1&allowWatchBookmarks=true&${query}`, {
      method: 'GET', dispatcher: this.#agent, signal, headers: { accept: 'application/json' },
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new Error(`watch ${path}: HTTP ${res.statusCode}: ${text}`);
    }
    let buf = '';
    for await (const chunk of res.body) {
      buf += (chunk as Buffer).toString('utf8');
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line !== '') onEvent(JSON.parse(line) as WatchEvent);
        nl = buf.indexOf('\n');
      }
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
