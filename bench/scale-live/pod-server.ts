/**
 * The pods' side of the benchmark, as one process: an HTTP server on one
 * port of every address of the plane's loopback pod network (it listens on
 * the wildcard address, because 20,000 listeners cost more than the probes,
 * and drops any connection whose local address is outside the pod network).
 * It answers every GET with 200 and notes when each pod IP got a connection,
 * which is how probes are counted from the pods' side (a TCP probe connects
 * and closes, an HTTP probe connects and asks).
 *
 * Protocol: argv `<allowed prefixes, comma-separated, e.g. 127.42.,127.43.>`;
 * prints `{"port":N}`, then answers one JSON line per request line on stdin:
 *   {"op":"times","since":ms,"ips":[...]|null} → {"times":{ip:[ms,...]}}
 *   {"op":"count"} → {"connections":n,"refused":n}
 *   {"op":"fail","ips":[...],"status":503} → {"failing":n}: from now on an HTTP
 *     request to one of these pod IPs is answered with that status (a failing
 *     readiness endpoint; the connection is still accepted and counted)
 *   {"op":"heal","ips":[...]|null} → {"failing":n}: those (null: all) answer 200 again
 *   {"op":"stats"} → {"connections":n,"refused":n,"loop_delay_max_ms":x,"loop_delay_p99_ms":x}
 *     (its own event-loop delay since the previous "stats", 10 ms resolution:
 *     while its loop stands still it accepts nothing, the listen queue fills
 *     and the kernel drops SYNs)
 * Exits when stdin closes.
 */
import http from 'node:http';
import { createInterface } from 'node:readline';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const prefixes = (process.argv[2] ?? '').split(',');
if (!prefixes.every((p) => /^127\.\d+\.$/.test(p))) {
  process.stderr.write('usage: pod-server.ts 127.<X>.[,127.<Y>.]\n');
  process.exit(2);
}

const horizonMs = 15 * 60_000;
const times = new Map<string, number[]>();
let connections = 0;
let refused = 0;
/** Pod IP → the status its HTTP requests get while it fails. */
const failing = new Map<string, number>();
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

const server = http.createServer((req, res) => {
  req.resume();
  const status = failing.get((req.socket.localAddress ?? '').replace(/^::ffff:/, ''));
  res.writeHead(status ?? 200, { 'content-type': 'text/plain' });
  res.end(status === undefined ? 'ok\n' : 'failing\n');
});
server.on('connection', (sock) => {
  const ip = (sock.localAddress ?? '').replace(/^::ffff:/, '');
  if (!prefixes.some((p) => ip.startsWith(p))) {
    refused++;
    sock.destroy();
    return;
  }
  connections++;
  let list = times.get(ip);
  if (list === undefined) times.set(ip, (list = []));
  list.push(Date.now());
});
server.keepAliveTimeout = 1000;

function prune(now: number): void {
  for (const list of times.values()) {
    let drop = 0;
    while (drop < list.length && (list[drop] ?? 0) < now - horizonMs) drop++;
    if (drop > 0) list.splice(0, drop);
  }
}

function answer(req: { op?: string; since?: number; ips?: string[] | null; status?: number }): Record<string, unknown> {
  if (req.op === 'count') return { connections, refused };
  if (req.op === 'fail') {
    for (const ip of req.ips ?? []) failing.set(ip, req.status ?? 503);
    return { failing: failing.size };
  }
  if (req.op === 'heal') {
    if (req.ips === null || req.ips === undefined) failing.clear();
    else for (const ip of req.ips) failing.delete(ip);
    return { failing: failing.size };
  }
  if (req.op === 'stats') {
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const out = { connections, refused, loop_delay_max_ms: ms(loopDelay.max), loop_delay_p99_ms: ms(loopDelay.percentile(99)) };
    loopDelay.reset();
    return out;
  }
  if (req.op !== 'times') return { error: `unknown op ${String(req.op)}` };
  prune(Date.now());
  const since = req.since ?? 0;
  const out: Record<string, number[]> = {};
  for (const ip of req.ips ?? times.keys()) {
    const list = times.get(ip);
    if (list !== undefined) out[ip] = list.filter((t) => t >= since);
  }
  return { times: out };
}

server.listen(0, '0.0.0.0', 4096, () => {
  const addr = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr !== null ? addr.port : 0 })}\n`);
});
createInterface({ input: process.stdin }).on('line', (l) => {
  process.stdout.write(`${JSON.stringify(answer(JSON.parse(l) as Parameters<typeof answer>[0]))}\n`);
});
process.stdin.on('end', () => process.exit(0));
