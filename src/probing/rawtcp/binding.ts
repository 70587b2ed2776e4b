/**
 * Node's own TCP handle (libuv `uv_tcp_t` behind `process.binding('tcp_wrap')`),
 * the layer `node:net` itself is built on, loaded defensively (ADR 0025).
 *
 * It is not a public API: it may change or go away in a Node release. So it
 * is used only when every member the probes need is present and behaves as
 * described here; otherwise `rawTcp` is undefined and the executors use
 * `node:net` (the fallback, same results). `OUTPROBE_RAW_TCP=0` forces the
 * fallback. The contract this file relies on, from Node 24's lib/net.js and
 * lib/internal/stream_base_commons.js:
 *
 * - `new TCP(constants.SOCKET)` makes an unconnected handle;
 * - `handle.connect(req, ip, port)` / `connect6` with a `TCPConnectWrap` whose
 *   `oncomplete(status)` runs once (status 0 or a negative libuv errno, e.g.
 *   UV_ECANCELED when the handle was closed first); a non-zero return is a
 *   synchronous failure and `oncomplete` never runs;
 * - `handle.useUserBuffer(buf)` makes reads land in `buf`; `handle.onread()`
 *   is then called with `streamBaseState[kReadBytesOrError]` holding the byte
 *   count (> 0), or a negative errno (UV_EOF at end of stream);
 * - `handle.writeLatin1String(req, s)` with a `WriteWrap`: returns 0 or a
 *   negative errno; a write the kernel did not take at once completes later
 *   with `req.oncomplete(status)` (Node holds `req` until then), one it took
 *   never calls it;
 * - `handle.close()` closes (pending requests complete with UV_ECANCELED),
 *   `handle.reset()` closes with RST (uv_tcp_close_reset);
 * - `handle.getsockname(out)` fills `{ address, port }`.
 */
import { getSystemErrorName } from 'node:util';

export interface ConnectReq {
  oncomplete: (this: ConnectReq, status: number) => void;
  owner: unknown;
}

export interface WriteReq {
  oncomplete: (this: WriteReq, status: number) => void;
  handle: TcpHandle;
  owner: unknown;
}

export interface TcpHandle {
  connect(req: ConnectReq, ip: string, port: number): number;
  connect6(req: ConnectReq, ip: string, port: number): number;
  readStart(): number;
  useUserBuffer(buffer: Uint8Array): void;
  writeLatin1String(req: WriteReq, data: string): number;
  getsockname(out: { address?: string; port?: number }): number;
  reset(): number;
  close(): void;
  /** Must always be a function: Node's setter aborts the process on anything else. */
  onread: (this: TcpHandle) => void;
  owner: unknown;
}

export interface RawTcp {
  newHandle(): TcpHandle;
  newConnectReq(): ConnectReq;
  newWriteReq(): WriteReq;
  /** Bytes of the last read (> 0) or its error (< 0). */
  readResult(): number;
  readonly eof: number;
}

interface Bindings {
  readonly TCP: new (type: number) => TcpHandle;
  readonly TCPConnectWrap: new () => ConnectReq;
  readonly constants: { readonly SOCKET: number };
}

interface StreamBindings {
  readonly WriteWrap: new () => WriteReq;
  readonly streamBaseState: Int32Array;
  readonly kReadBytesOrError: number;
}

const handleMethods = ['connect', 'connect6', 'readStart', 'useUserBuffer', 'writeLatin1String', 'getsockname', 'reset', 'close'] as const;

/** The binding, if it has the shape above; undefined (and the reason) otherwise. */
export function loadRawTcp(env: NodeJS.ProcessEnv = process.env): { readonly raw: RawTcp | undefined; readonly why: string } {
  if (env['OUTPROBE_RAW_TCP'] === '0') return { raw: undefined, why: 'OUTPROBE_RAW_TCP=0' };
  try {
    const binding = (process as unknown as { binding?: (name: string) => unknown }).binding;
    if (typeof binding !== 'function') return { raw: undefined, why: 'process.binding is missing' };
    const tcp = binding('tcp_wrap') as Partial<Bindings>;
    const stream = binding('stream_wrap') as Partial<StreamBindings>;
    const { TCP, TCPConnectWrap, constants } = tcp;
    const { WriteWrap, streamBaseState, kReadBytesOrError } = stream;
    if (typeof TCP !== 'function' || typeof TCPConnectWrap !== 'function' || typeof constants?.SOCKET !== 'number') return { raw: undefined, why: 'tcp_wrap has another shape' };
    if (typeof WriteWrap !== 'function' || !(streamBaseState instanceof Int32Array) || typeof kReadBytesOrError !== 'number') {
      return { raw: undefined, why: 'stream_wrap has another shape' };
    }
    const probe = new TCP(constants.SOCKET);
    const missing = handleMethods.filter((m) => typeof (probe as unknown as Record<string, unknown>)[m] !== 'function');
    probe.close();
    if (missing.length > 0) return { raw: undefined, why: `TCP handle lacks ${missing.join(', ')}` };
    const eof = (binding('uv') as { UV_EOF?: unknown }).UV_EOF;
    if (typeof eof !== 'number') return { raw: undefined, why: 'no UV_EOF' };
    const socketType = constants.SOCKET;
    return {
      raw: {
        newHandle: () => new TCP(socketType),
        newConnectReq: () => new TCPConnectWrap(),
        newWriteReq: () => new WriteWrap(),
        readResult: () => streamBaseState[kReadBytesOrError] ?? 0,
        eof,
      },
      why: '',
    };
  } catch (error: unknown) {
    return { raw: undefined, why: `loading tcp_wrap failed: ${String(error)}` };
  }
}

/** The error node:net builds for a failed connect (`ExceptionWithHostPort`): same message, code, errno, syscall. */
export function hostPortError(errno: number, syscall: string, address: string, port: number, local?: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(errno);
  const details = `${port > 0 ? ` ${address}:${port}` : ` ${address}`}${local === undefined ? '' : ` - Local (${local})`}`;
  return Object.assign(new Error(`${syscall} ${code}${details}`), { errno, code, syscall, address, port });
}

/** The error node:net builds for a failed read or write (`ErrnoException`). */
export function errnoError(errno: number, syscall: string): NodeJS.ErrnoException {
  const code = getSystemErrorName(errno);
  return Object.assign(new Error(`${syscall} ${code}`), { errno, code, syscall });
}
