import net from 'node:net';
import { DeadlineSweep } from '../deadline.ts';
import type { DeadlineEntry } from '../deadline.ts';
import { describeTransportError } from '../http/transport-error.ts';
import { errored, failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
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
 * with RST (`resetAndDestroy`), which leaves no TIME-WAIT entry behind on
 * outprobe's side (the kubelet gets a similar effect from SO_LINGER 1 s).
 * The deadline is an entry of the shared sweep (deadline.ts), not a timer of
 * its own.
 */
export const tcpProbe: TcpProber = (req, signal) =>
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
