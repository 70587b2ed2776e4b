// A Service client for the pod network: run inside a namespace (node or
// sandbox) with `node client.ts <ip> <port> <intervalMs> <timeoutMs>`, it opens
// a fresh TCP connection for every request (so kube-proxy picks an endpoint for
// each, as it would for new clients), GETs `/`, and prints one JSON line per
// request: `{"t":<start epoch ms>,"ms":<duration>,"pod":"<name>"}` or
// `{"t":…,"ms":…,"err":"<code>"}`. The pod name comes from podserve's
// `x-pod` response header. Stops when stdin closes; requests never overlap
// more than `ceil(timeout / interval)` deep.
import http from 'node:http';

const [ip = '', portArg = '', intervalArg = '50', timeoutArg = '500'] = process.argv.slice(2);
const port = Number(portArg);
const intervalMs = Number(intervalArg);
const timeoutMs = Number(timeoutArg);
if (ip === '' || !Number.isInteger(port) || !(intervalMs > 0) || !(timeoutMs > 0)) {
  process.stderr.write('usage: client.ts <ip> <port> [intervalMs] [timeoutMs]\n');
  process.exit(2);
}

const agent = new http.Agent({ keepAlive: false });
function once(): void {
  const t = Date.now();
  const req = http.get({ host: ip, port, path: '/', agent, timeout: timeoutMs }, (res) => {
    const pod = res.headers['x-pod'];
    res.resume();
    res.on('end', () => { process.stdout.write(`${JSON.stringify({ t, ms: Date.now() - t, status: res.statusCode, pod: typeof pod === 'string' ? pod : '' })}\n`); });
  });
  req.on('timeout', () => { req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })); });
  req.on('error', (err: NodeJS.ErrnoException) => { process.stdout.write(`${JSON.stringify({ t, ms: Date.now() - t, err: err.code ?? err.message })}\n`); });
}
const timer = setInterval(once, intervalMs);
process.stdin.resume();
process.stdin.on('end', () => { clearInterval(timer); setTimeout(() => process.exit(0), timeoutMs + 50).unref(); });
process.stdin.on('error', () => { process.exit(0); });
