import http2 from 'node:http2';
import type tls from 'node:tls';

/**
 * One GET over HTTP/2 on a TLS socket whose ALPN chose `h2`, as Go's
 * http2 Transport (bundled in net/http, enabled on the kubelet's probe
 * transport) sends it: the pseudo-headers from the request line and Host,
 * the other headers lower-cased, and none of the connection-specific ones
 * (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade),
 * which HTTP/2 forbids and Go drops. Header lines come as byte strings.
 */
export interface H2Callbacks {
  readonly onHead: (statusCode: number, headers: Record<string, string | string[]>) => void;
  readonly onBody: (chunk: Buffer) => void;
  readonly onEnd: () => void;
  readonly onError: (err: Error) => void;
}

export interface H2Exchange {
  readonly pause: () => void;
  readonly resume: () => void;
  readonly close: () => void;
}

const connectionSpecific = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/** Go's http2 error names by code (RFC 9113 §7), as its StreamError prints them. */
const codeNames = [
  'NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED', 'FRAME_SIZE_ERROR',
  'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR', 'ENHANCE_YOUR_CALM', 'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED',
];

export function h2Exchange(
  socket: tls.TLSSocket,
  request: {
    /** The address connected to (`https://<ip>:<port>`), which node:http2 needs as a URL; never the Host value. */
    readonly origin: string;
    readonly method: string;
    readonly path: string;
    readonly authority: string;
    readonly headers: readonly (readonly [string, string])[];
  },
  on: H2Callbacks,
): H2Exchange {
  let done = false;
  const finish = (step: () => void): void => {
    if (done) return;
    done = true;
    step();
  };
  let session: http2.ClientHttp2Session;
  try {
    session = http2.connect(request.origin, { createConnection: () => socket, settings: { enablePush: false } });
  } catch (err: unknown) {
    finish(() => on.onError(err instanceof Error ? err : new Error(String(err))));
    return { pause: () => undefined, resume: () => undefined, close: () => socket.destroy() };
  }
  session.on('error', (err: Error) => finish(() => on.onError(err)));
  // Go reads a connection that goes away before the response as `unexpected EOF`.
  let goaway = false;
  session.on('goaway', () => {
    goaway = true;
  });
  const headers: http2.OutgoingHttpHeaders = {
    ':authority': request.authority,
    ':method': request.method,
    ':path': request.path,
    ':scheme': 'https',
  };
  for (const [name, value] of request.headers) {
    const lower = name.toLowerCase();
    if (connectionSpecific.has(lower)) continue;
    const have = headers[lower];
    headers[lower] = have === undefined ? value : Array.isArray(have) ? [...have, value] : [String(have), value];
  }
  let stream: http2.ClientHttp2Stream;
  try {
    stream = session.request(headers, { endStream: true });
  } catch (err: unknown) {
    finish(() => on.onError(err instanceof Error ? err : new Error(String(err))));
    return { pause: () => undefined, resume: () => undefined, close: () => session.destroy() };
  }
  stream.on('response', (h: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader) => {
    const status = Number(h[':status']);
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(h)) if (!k.startsWith(':') && v !== undefined) out[k] = v;
    if (done) return;
    on.onHead(status, out);
    headed = true;
    // onHead or onBody may end the exchange (the caller aborts at the body cap).
    const over = (): boolean => done;
    for (const chunk of early.splice(0)) if (!over()) on.onBody(chunk);
    if (ended) finish(on.onEnd);
  });
  // node:http2 can deliver DATA of a read before the stream's 'response'
  // event (seen when HEADERS and DATA arrive in one TLS record): hold it, a
  // read's worth at most, until the head is out.
  let headed = false;
  let ended = false;
  const early: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    if (done) return;
    if (headed) on.onBody(chunk);
    else early.push(chunk);
  });
  stream.on('end', () => {
    if (headed) finish(on.onEnd);
    else ended = true;
  });
  stream.on('error', () => undefined); // reported from 'close' with the RST code, as Go words it
  stream.on('close', () => {
    if (done) return;
    if (goaway || session.destroyed) {
      finish(() => on.onError(new Error('unexpected EOF')));
      return;
    }
    const code = stream.rstCode;
    const name = codeNames[code] ?? `unknown error code 0x${code.toString(16)}`;
    finish(() => on.onError(new Error(`stream error: stream ID ${stream.id ?? 1}; ${name}; received from peer`)));
  });
  return {
    pause: () => stream.pause(),
    resume: () => stream.resume(),
    close: () => {
      done = true;
      stream.close();
      session.destroy();
    },
  };
}
