// Ports for the control plane's components: claimed below the ephemeral range with a
// machine-wide lock (test/support/ports), so no outgoing connection and no concurrent run
// can take one between choosing it and the component binding it.
import net from 'node:net';

export { claimPort, releasePort } from '../ports/index.ts';


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
