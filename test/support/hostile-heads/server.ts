// Hostile and healthy HTTP targets on loopback, in a process of their own so that the prober's
// memory is measured alone (test/integration/head-budget.test.ts, ADR 0056).
// argv: <second octet X> <hostile count> <healthy count> <port>. Hostile target k listens on
// hostAt(1, k) (127.X.1.1 up, 250 a /24), healthy target k on hostAt(10, k) (127.X.10.1 up).
// Every hostile connection gets a head of just under 10 MiB (Go's limit, which the kubelet keeps),
// trickled at 128 KiB every 100 ms (all of it in 8 s, within a 10 s probe timeout: every probe of
// every target is in flight at once and holds what it got), then the connection stays open. One
// of three shapes by k mod 3:
// 8 KiB header lines, one line without LF, or 2.6 million tiny lines with distinct names.
// Healthy targets answer `200 ok` at once. Prints `ready` once every listener is up, and
// closes everything on SIGTERM or when stdin ends (the parent died).
import net from 'node:net';

const [octet, hostileCount, healthyCount, port] = process.argv.slice(2).map(Number) as [number, number, number, number];
const headBytes = (10 << 20) - 4096;

function shape(kind: number): Buffer {
  const status = 'HTTP/1.1 200 OK\r\n';
  if (kind === 0) {
    const line = `X-Fill: ${'f'.repeat(8192 - 10)}\r\n`;
    return Buffer.from(status + line.repeat(Math.floor((headBytes - status.length) / line.length)), 'latin1');
  }
  if (kind === 1) return Buffer.from(status + 'X-Long: ' + 'l'.repeat(headBytes - status.length - 8), 'latin1');
  const parts: string[] = [status];
  let n = status.length;
  for (let i = 0; n < headBytes - 16; i++) {
    const line = `h${i.toString(36)}:b\r\n`;
    parts.push(line);
    n += line.length;
  }
  return Buffer.from(parts.join(''), 'latin1');
}

const heads = [shape(0), shape(1), shape(2)];
const slice = 128 << 10;
const tickMs = 100;
const sockets = new Set<net.Socket>();

function hostile(kind: number): net.Server {
  return net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.once('data', () => {
      const head = heads[kind] ?? heads[0]!;
      let at = 0;
      const more = (): void => {
        if (s.destroyed || at >= head.length) return;
        s.write(head.subarray(at, at + slice));
        at += slice;
        setTimeout(more, tickMs).unref();
      };
      more();
    });
  });
}

function healthy(): net.Server {
  return net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.once('data', () => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
  });
}

const servers: net.Server[] = [];
const listen = (server: net.Server, host: string): Promise<void> => new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, host, () => resolve());
  servers.push(server);
});

const hostAt = (octet: number, block: number, k: number): string => `127.${octet}.${block + Math.floor(k / 250)}.${(k % 250) + 1}`;
await Promise.all([
  ...Array.from({ length: hostileCount }, (_, k) => listen(hostile(k % 3), hostAt(octet, 1, k))),
  ...Array.from({ length: healthyCount }, (_, k) => listen(healthy(), hostAt(octet, 10, k))),
]);
process.stdout.write('ready\n');

const stop = (): void => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
