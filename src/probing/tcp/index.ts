import net from 'node:net';
import { setLongTimeout } from '../../kernel/index.ts';
import { describeTransportError } from '../http/transport-error.ts';
import { errored, failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import type { TcpProbeRequest } from '../request.ts';
import { joinHostPort } from '../request.ts';

export type TcpProber = (req: TcpProbeRequest, signal?: AbortSignal) => Promise<Outcome>;

/**
 * The kubelet's TCP probe (pkg/probe/tcp): a completed connect within
 * `timeoutSeconds` is Success and the socket is closed at once without
 * writing or reading, so a listener that accepts and then resets still counts
 * as healthy. A refused or timed-out dial is Failure. The socket is closed
 * with RST (`resetAndDestroy`), which leaves no TIME-WAIT entry behind on
 * outprobe's side (the kubelet gets a similar effect from SO_LINGER 1 s).
 */
export const tcpProbe: TcpProber = (req, signal) =>
  new Promise<Outcome>((resolve) => {
    if (signal?.aborted === true) {
      resolve(errored('probe cancelled'));
      return;
    }
    const addr = joinHostPort(req.ip, req.port);
    const socket = net.connect({ host: req.ip, port: req.port });
    const finish = (outcome: Outcome, reset: boolean): void => {
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => undefined); // late errors of a closed socket are not news
      if (reset && !socket.destroyed) socket.resetAndDestroy();
      else socket.destroy();
      resolve(outcome);
    };
    const onAbort = (): void => {
      finish(errored('probe cancelled'), false);
    };
    const cancelTimer = setLongTimeout(() => {
      finish(failure(`dial tcp ${addr}: i/o timeout`), false);
    }, req.timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      finish(success(''), true);
    });
    socket.once('error', (err: Error) => {
      finish(failure(describeTransportError(err, addr)), false);
    });
  });
