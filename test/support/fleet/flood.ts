// A bounded HTTP load for the peer-trust e2e test (run with `node flood.ts '<json>'`, usually in a
// sandbox of the pod network): `rate` requests a second for `seconds` seconds, each to one of
// `targets` in turn, with `concurrency` in flight at most, and prints one JSON line with the
// statuses it got and the rate it held. Modes: `stranger` sends a new random bearer token each
// time; `token` sends `token` each time. It stops by itself; it targets only the addresses given
// (the test passes pod-network addresses).
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';

export interface FloodTarget {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly body?: string;
}

export interface FloodSpec {
  readonly targets: readonly FloodTarget[];
  readonly rate: number;
  readonly seconds: number;
  readonly concurrency: number;
  readonly mode: 'stranger' | 'token';
  readonly token?: string;
  /** Each request's timeout. @default 5000 */
  readonly timeoutMs?: number;
}

export interface FloodResult {
  readonly sent: number;
  readonly seconds: number;
  /** Requests a second actually sent. */
  readonly rate: number;
  /** Per target: status (or 'error') → count. */
  readonly statuses: Record<string, Record<string, number>>;
  /** Per target: latency p50 and max in ms of the answered requests. */
  readonly latencyMs: Record<string, { readonly p50: number; readonly max: number }>;
}

export async function flood(spec: FloodSpec): Promise<FloodResult> {
  const agent = new Agent({ connections: spec.concurrency, keepAliveTimeout: 4000 });
  const statuses: Record<string, Record<string, number>> = {};
  const latencies: Record<string, number[]> = {};
  const start = Date.now();
  const end = start + spec.seconds * 1000;
  let sent = 0;
  let inFlight = 0;
  const one = async (t: FloodTarget): Promise<void> => {
    const token = spec.mode === 'stranger' ? randomBytes(24).toString('base64url') : (spec.token ?? '');
    const t0 = Date.now();
    let key: string;
    try {
      const res = await request(t.url, {
        method: t.method, dispatcher: agent, headersTimeout: spec.timeoutMs ?? 5000, bodyTimeout: spec.timeoutMs ?? 5000,
        headers: { authorization: `Bearer ${token}`, ...(t.body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(t.body === undefined ? {} : { body: t.body }),
      });
      await res.body.dump();
      key = String(res.statusCode);
      (latencies[t.url] ??= []).push(Date.now() - t0);
    } catch {
      key = 'error';
    }
    const s = (statuses[t.url] ??= {});
    s[key] = (s[key] ?? 0) + 1;
  };
  const running = new Set<Promise<void>>();
  const total = Math.max(1, Math.floor(spec.rate * spec.seconds));
  // Bounded in count and in time: `rate × seconds` requests at most, none sent after `seconds` (plus one request timeout to finish).
  while (sent < total && Date.now() < end) {
    const due = start + (sent * 1000) / spec.rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inFlight >= spec.concurrency) {
      await Promise.race(running);
      continue;
    }
    const target = spec.targets[sent % spec.targets.length];
    if (target === undefined) break;
    sent++;
    inFlight++;
    const p = one(target).finally(() => {
      inFlight--;
      running.delete(p);
    });
    running.add(p);
  }
  await Promise.all(running);
  await agent.close();
  const seconds = (Date.now() - start) / 1000;
  const latencyMs: Record<string, { p50: number; max: number }> = {};
  for (const [url, xs] of Object.entries(latencies)) {
    const sorted = [...xs].sort((a, b) => a - b);
    latencyMs[url] = { p50: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
  }
  return { sent, seconds, rate: sent / seconds, statuses, latencyMs };
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2] ?? '{}') as FloodSpec;
  void flood(spec).then((r) => process.stdout.write(`${JSON.stringify(r)}\n`));
}
