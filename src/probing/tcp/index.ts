import net from 'node:net';
import { linkAbort, unlinkAbort } from '../abort-fanout.ts';
import type { AbortLink, AbortList } from '../abort-fanout.ts';
import { DeadlineSweep } from '../deadline.ts';
import type { DeadlineEntry, DeadlineList } from '../deadline.ts';
import { describeTransportError } from '../http/transport-error.ts';
import { errored, failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import { hostPortError, rawTcp } from '../rawtcp/index.ts';
import type { ConnectReq, RawTcp, TcpHandle } from '../rawtcp/index.ts';
import type { TcpProbeRequest } from '../request.ts';
import { joinHostPort } from '../request.ts';

export type TcpProber = (req: TcpProbeRequest, signal?: AbortSignal) => Promise<Outcome>;

const cancelled = Object.freeze(errored('probe cancelled'));
const connected = Object.freeze(success(''));

/** Every TCP probe's deadline, on one timer. */
const deadlines = new DeadlineSweep();

/**
 * The kubelet's TCP probe (pkg/probe/tcp): a completed connect within
 * `timeoutSeconds` is Success and the socket is closed at once without
 * writing or reading, so a listener that accepts and then resets still counts
 * as healthy. A refused or timed-out dial is Failure. The socket is closed
 * with RST, which leaves no TIME-WAIT entry behind on outprobe's side (the
 * kubelet gets a similar effect from SO_LINGER 1 s).
 *
 * It runs on Node's TCP handle directly when that is usable (ADR 0025: no
 * net.Socket, stream or per-probe timer), else on `node:net`; both give the
 * same outcomes.
 */
export const tcpProbe: TcpProber = (req, signal) => {
  if (signal?.aborted === true) return Promise.resolve(cancelled);
  const raw = rawTcp();
  if (raw !== undefined && net.isIP(req.ip) !== 0) {
    // withResolvers: no executor closure and context per probe.
    const { promise, resolve } = Promise.withResolvers<Outcome>();
    new RawAttempt(raw, req, signal, resolve).start();
    return promise;
  }
  return netTcpProbe(req, signal);
};

/**
 * One probe on a raw handle. It is its own deadline entry and its own link
 * on its signal's abort list (abort-fanout.ts), so a probe allocates the
 * handle, its connect request, this object and the promise, and nothing else.
 */
class RawAttempt implements DeadlineEntry, AbortLink {
  readonly #raw: RawTcp;
  readonly #req: TcpProbeRequest;
  readonly #signal: AbortSignal | undefined;
  readonly #resolve: (outcome: Outcome) => void;
  #handle: TcpHandle | undefined;
  #done = false;
  deadlineAt = 0;
  deadlineNext: DeadlineEntry | undefined = undefined;
  deadlinePrev: DeadlineEntry | undefined = undefined;
  deadlineList: DeadlineList | undefined = undefined;
  abortNext: AbortLink | undefined = undefined;
  abortPrev: AbortLink | undefined = undefined;
  abortList: AbortList | undefined = undefined;

  constructor(raw: RawTcp, req: TcpProbeRequest, signal: AbortSignal | undefined, resolve: (outcome: Outcome) => void) {
    this.#raw = raw;
    this.#req = req;
    this.#signal = signal;
    this.#resolve = resolve;
  }

  start(): void {
    const { ip, port } = this.#req;
    const handle = this.#raw.newHandle();
    this.#handle = handle;
    const connect = this.#raw.newConnectReq();
    connect.owner = this;
    connect.oncomplete = onConnect;
    const err = ip.includes(':') ? handle.connect6(connect, ip, port) : handle.connect(connect, ip, port);
    if (err !== 0) {
      // As node:net reports a synchronous connect error: with the local address, if there is one.
      const local: { address?: string; port?: number } = {};
      const named = handle.getsockname(local) === 0 && local.address !== undefined;
      this.#finish(failure(describeTransportError(hostPortError(err, 'connect', ip, port, named ? `${local.address ?? ''}:${String(local.port)}` : undefined), joinHostPort(ip, port))), false);
      return;
    }
    deadlines.add(this, this.#req.timeoutMs);
    if (this.#signal !== undefined) linkAbort(this.#signal, this);
  }

  connected(status: number): void {
    if (this.#done) return; // closed by the deadline or an abort: the connect was cancelled
    if (status === 0) this.#finish(connected, true);
    else this.#finish(failure(describeTransportError(hostPortError(status, 'connect', this.#req.ip, this.#req.port), joinHostPort(this.#req.ip, this.#req.port))), false);
  }

  onDeadline(): void {
    this.#finish(failure(`dial tcp ${joinHostPort(this.#req.ip, this.#req.port)}: i/o timeout`), false);
  }

  onAbort(): void {
    this.#finish(cancelled, false);
  }

  #finish(outcome: Outcome, reset: boolean): void {
    if (this.#done) return;
    this.#done = true;
    deadlines.remove(this);
    unlinkAbort(this);
    const handle = this.#handle;
    if (handle !== undefined) {
      this.#handle = undefined;
      if (!reset || handle.reset() !== 0) handle.close();
    }
    this.#resolve(outcome);
  }
}

function onConnect(this: ConnectReq, status: number): void {
  (this.owner as RawAttempt).connected(status);
}

/** The same probe on node:net (the fallback when Node's TCP handle is not usable). */
export const netTcpProbe: TcpProber = (req, signal) =>
  new Promise<Outcome>((resolve) => {
    if (signal?.aborted === true) {
      resolve(cancelled);
      return;
    }
    const addr = joinHostPort(req.ip, req.port);
    const socket = net.connect({ host: req.ip, port: req.port });
    const entry: DeadlineEntry = {
      deadlineAt: 0,
      deadlineNext: undefined,
      deadlinePrev: undefined,
      deadlineList: undefined,
      onDeadline: () => {
        finish(failure(`dial tcp ${addr}: i/o timeout`), false);
      },
    };
    const finish = (outcome: Outcome, reset: boolean): void => {
      deadlines.remove(entry);
      signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => undefined); // late errors of a closed socket are not news
      if (reset && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => {
      finish(cancelled, false);
    };
    deadlines.add(entry, req.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      finish(connected, true);
    });
    socket.once('error', (err: Error) => {
      finish(failure(describeTransportError(err, addr)), false);
    });
  });
