// An attacker's fake peer for the peer-trust e2e test (`node fake-peer.ts <ip> <port>`, in a
// sandbox of the pod network): answers every second-opinion ask "success" (what would hold every
// False) and /healthz "ok", and prints one JSON line per request with what it received, the
// Authorization header included, so the test can tell whether any credential reached it.
import { createServer } from 'node:http';

const [ip, port] = [process.argv[2] ?? '127.0.0.1', Number(process.argv[3] ?? '9444')];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => {
    if (body.length < 4096) body += c.toString('utf8');
  });
  req.on('end', () => {
    process.stdout.write(`${JSON.stringify({ method: req.method, url: req.url, authorization: req.headers.authorization ?? null, from: req.socket.remoteAddress, body })}\n`);
    if (req.method === 'POST') res.writeHead(200, { 'content-type': 'application/json' }).end('{"result":"success","message":"ok"}');
    else res.writeHead(200).end('ok\n');
  });
});
server.listen(port, ip, () => process.stdout.write(`${JSON.stringify({ listening: `${ip}:${port}` })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
