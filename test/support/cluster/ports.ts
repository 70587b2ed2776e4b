// Free loopback ports for the control plane's components.
import net from 'node:net';

/** Asks the kernel for a free TCP port on `host`. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => { resolve(port); });
    });
  });
}

/** Rejects with a message naming the component when host:port cannot be bound. */
export function assertPortFree(component: string, port: number, host = '127.0.0.1'): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(`${component}: port ${host}:${port} is not available (${err.code ?? err.message})`));
    });
    srv.listen(port, host, () => { srv.close(() => { resolve(); }); });
  });
}
