/**
 * Go-style wording for transport errors, so probe messages read like the
 * kubelet's (`dial tcp 10.0.0.5:8080: connect: connection refused`). outprobe
 * matches the kubelet's *result*; the wording is a courtesy to operators who
 * know it. Works for errors from node:net/node:tls and from undici.
 */

const syscallText: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connect: connection refused',
  ECONNRESET: 'read: connection reset by peer',
  EPIPE: 'write: broken pipe',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  EADDRNOTAVAIL: 'connect: cannot assign requested address',
  ETIMEDOUT: 'i/o timeout',
};

interface ErrnoLike {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
}

function errnoCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    const code = (e as ErrnoLike).code;
    if (typeof code === 'string' && Object.hasOwn(syscallText, code)) return code;
    e = (e as ErrnoLike).cause;
  }
  return undefined;
}

/** `dial tcp <addr>: connect: connection refused` and friends. */
export function describeTransportError(err: unknown, addr: string): string {
  const code = errnoCode(err);
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EADDRNOTAVAIL') {
    return `dial tcp ${addr}: ${syscallText[code] ?? code}`;
  }
  if (code !== undefined) return syscallText[code] ?? code;
  if (err instanceof Error) return err.message;
  return String(err);
}
