import type { Duplex } from 'node:stream';
import { WebSocket } from 'undici';
import type { Dispatcher } from 'undici';
import { setLongTimeout } from '../../kernel/index.ts';
import { errored, failure, success } from '../outcome.ts';
import type { Outcome } from '../outcome.ts';
import { execOutputText, sanitizeOutput } from './output.ts';
import { capturingUpgrades } from './upgrade.ts';

export { execOutputText, maxPublishedExecOutput, sanitizeOutput, withheldExecOutput } from './output.ts';

/** The kubelet caps exec probe output (stdout and stderr together) at 10 KiB. */
export const maxExecOutput = 10 * 1024;

export interface ExecTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
  readonly command: readonly string[];
  readonly timeoutMs: number;
}

export type ExecProber = (target: ExecTarget, signal?: AbortSignal) => Promise<Outcome>;

export interface ExecProberOptions {
  /** API server base URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string;
  /** Carries the client's TLS material (CA, client certificate). */
  readonly dispatcher: Dispatcher;
  /**
   * Authentication headers (Authorization, Impersonate-User), asked per call
   * so rotated or refreshed credentials are used.
   */
  readonly headers?: (() => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>) | undefined;
  /**
   * Put the command's output in the Outcome (sanitised, cut to 512
   * characters). Otherwise the Outcome says only how many bytes there were,
   * so nothing the command printed reaches Events, conditions or logs.
   * @default false
   */
  readonly publishOutput?: boolean;
  /**
   * How long the close handshake may take once a probe has ended (timeout,
   * cancel, error) before the connection is destroyed: a peer that never
   * answers the Close frame would otherwise hold the socket open for good.
   * @default 1000
   */
  readonly closeTimeoutMs?: number;
}

/** Channel-protocol subprotocols, newest first (v5 adds a close channel). */
const protocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

interface ExecStatus {
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
}

/**
 * Exec probes through the API server's `pods/exec` (WebSocket channel
 * protocol), with the kubelet's semantics (kubelet-probes.md §6.3): exit 0 is
 * Success, a non-zero exit is Failure, stdout and stderr combined are capped
 * at 10 KiB and become the output; a timeout is Failure (ExecProbeTimeout);
 * anything else (forbidden, pod gone, stream broken) is a prober error.
 * Opt-in: the controller needs RBAC `create` on `pods/exec`. Unlike the
 * kubelet, the output is withheld unless `publishOutput` (see output.ts).
 */
export function createExecProber(options: ExecProberOptions): ExecProber {
  const closeTimeoutMs = options.closeTimeoutMs ?? 1000;
  return async (target, signal) => {
    let headers: Readonly<Record<string, string>>;
    try {
      headers = (await options.headers?.()) ?? {};
    } catch (err: unknown) {
      // The credential source's own message (an exec plugin's stderr, a missing file), never the credential.
      return errored(`no credentials for the API server: ${err instanceof Error ? err.message : String(err)}`);
    }
    return new Promise<Outcome>((resolve) => {
      if (signal?.aborted === true) {
        resolve(errored('probe cancelled'));
        return;
      }
      const query = new URLSearchParams({ container: target.container, stdout: 'true', stderr: 'true' });
      for (const part of target.command) query.append('command', part);
      const url = `${options.server.replace(/^http/, 'ws')}/api/v1/namespaces/${encodeURIComponent(target.namespace)}/pods/${encodeURIComponent(target.pod)}/exec?${query.toString()}`;
      const closer = new Closer(closeTimeoutMs);
      const dispatcher = capturingUpgrades(options.dispatcher, closer.adopt);
      const ws = new WebSocket(url, { protocols, dispatcher, ...(Object.keys(headers).length === 0 ? {} : { headers: { ...headers } }) });
      ws.binaryType = 'arraybuffer';
      const chunks: Buffer[] = [];
      let size = 0;
      let status: ExecStatus | undefined;
      let settled = false;
      const finish = (outcome: Outcome): void => {
        if (settled) return;
        settled = true;
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
        try {
          ws.close();
        } catch {
          // already closing
        }
        closer.closing();
        resolve(outcome);
      };
      const onAbort = (): void => {
        finish(errored('probe cancelled'));
      };
      const cancelTimer = setLongTimeout(() => {
        finish(failure(`command ${JSON.stringify(target.command.join(' '))} timed out`));
      }, target.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      ws.addEventListener('message', (ev) => {
        const data = Buffer.from(ev.data as ArrayBuffer);
        const channel = data[0];
        const payload = data.subarray(1);
        if ((channel === 1 || channel === 2) && size < maxExecOutput) {
          const part = payload.subarray(0, maxExecOutput - size);
          chunks.push(part);
          size += part.length;
        } else if (channel === 3 && payload.length > 0) {
          try {
            status = JSON.parse(payload.toString('utf8')) as ExecStatus;
          } catch {
            status = { status: 'Failure', reason: 'InternalError', message: payload.toString('utf8') };
          }
        }
      });
      ws.addEventListener('close', () => {
        closer.closed();
        const output = execOutputText(Buffer.concat(chunks, size), options.publishOutput === true);
        if (status === undefined) finish(errored('exec stream closed without a status'));
        else if (status.status === 'Success') finish(success(output));
        else if (status.reason === 'NonZeroExitCode') finish(failure(output));
        else finish(errored(sanitizeOutput(status.message ?? 'exec failed')));
      });
      ws.addEventListener('error', (ev) => {
        const err = (ev as unknown as { error?: unknown }).error;
        finish(errored(`exec: ${err instanceof Error ? err.message : 'WebSocket error'}`));
      });
    });
  };
}

/**
 * Destroys the upgraded socket when the close handshake has not completed
 * within `timeoutMs` of the probe ending (the socket may arrive after that,
 * if the probe ended during the upgrade).
 */
class Closer {
  readonly #timeoutMs: number;
  #socket: Duplex | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closing = false;
  #closed = false;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  readonly adopt = (socket: Duplex): void => {
    this.#socket = socket;
    if (this.#closing) this.#arm();
  };

  closing(): void {
    this.#closing = true;
    this.#arm();
  }

  closed(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #arm(): void {
    if (this.#closed || this.#socket === undefined || this.#timer !== undefined) return;
    const socket = this.#socket;
    this.#timer = setTimeout(() => socket.destroy(), this.#timeoutMs);
    this.#timer.unref();
  }
}
