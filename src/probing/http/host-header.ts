import { fromBytes } from './go-url-escape.ts';

/**
 * Go's handling of the Host value (req.Host, or the URL's host when that is
 * empty), in two steps, because the HTTP/1 and HTTP/2 transports differ
 * after the first:
 * 1. `punycodeHost` (httpguts.PunycodeHostPort, in the client for both): a
 *    non-ASCII host is converted label by label with idna.ToASCII, the raw
 *    Punycode profile (no case mapping, no validation: `BÜCHER.example` →
 *    `xn--BCHER-2pa.example`);
 * 2. HTTP/1 (`http1HostLine`, Request.write): any byte outside
 *    httpguts.ValidHostHeader's set sends an empty Host instead, then
 *    removeZone (`[fe80::1%eth0]:80` → `[fe80::1]:80`); HTTP/2
 *    (`validHostHeader`): the request fails with `http2: invalid Host
 *    header`, and a zone is kept in `:authority`.
 * Input and output are byte strings.
 */
export function punycodeHost(host: string): string {
  // eslint-disable-next-line no-control-regex -- "is ASCII": every byte below 0x80
  return /^[\x00-\x7f]*$/.test(host) ? host : punycodeHostPort(fromBytes(host));
}

export function http1HostLine(host: string): string {
  return validHostHeader(host) ? removeZone(host) : '';
}

export function validHostHeader(host: string): boolean {
  return validHost.test(host);
}

const validHost = /^[0-9A-Za-z!$%&()*+,\-.:;=[\]'_~]*$/;

function punycodeHostPort(text: string): string {
  const { host, port } = splitHostPort(text);
  const ascii = host
    .split('.')
    .map((label) => (/^[\p{ASCII}]*$/u.test(label) ? label : `xn--${punycode(label)}`))
    .join('.');
  return port === undefined ? ascii : joinHostPort(ascii, port);
}

/** net.SplitHostPort, or the whole string as host when it does not split. */
function splitHostPort(s: string): { host: string; port: string | undefined } {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    if (close < 0 || s[close + 1] !== ':' || s.indexOf(']', close + 1) >= 0) return { host: s, port: undefined };
    return { host: s.slice(1, close), port: s.slice(close + 2) };
  }
  const colon = s.lastIndexOf(':');
  if (colon < 0 || s.indexOf(':') !== colon) return { host: s, port: undefined };
  return { host: s.slice(0, colon), port: s.slice(colon + 1) };
}

function joinHostPort(host: string, port: string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function removeZone(host: string): string {
  if (!host.startsWith('[')) return host;
  const close = host.lastIndexOf(']');
  const pct = host.lastIndexOf('%', close);
  return pct < 0 ? host : host.slice(0, pct) + host.slice(close);
}

/** RFC 3492 Punycode encoding of one label (code points, no mapping). */
function punycode(label: string): string {
  const base = 36;
  const tMin = 1;
  const tMax = 26;
  const digit = (d: number): string => String.fromCharCode(d < 26 ? 97 + d : 22 + d);
  const adapt = (delta: number, points: number, first: boolean): number => {
    let d = first ? Math.floor(delta / 700) : delta >> 1;
    d += Math.floor(d / points);
    let k = 0;
    for (; d > ((base - tMin) * tMax) >> 1; k += base) d = Math.floor(d / (base - tMin));
    return k + Math.floor(((base - tMin + 1) * d) / (d + 38));
  };
  const input = Array.from(label, (c) => c.codePointAt(0) ?? 0);
  let out = input.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join('');
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += '-';
  let n = 0x80;
  let delta = 0;
  let bias = 72;
  while (handled < input.length) {
    const m = Math.min(...input.filter((c) => c >= n));
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of input) {
      if (c < n) delta++;
      if (c !== n) continue;
      let q = delta;
      for (let k = base; ; k += base) {
        const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
        if (q < t) break;
        out += digit(t + ((q - t) % (base - t)));
        q = Math.floor((q - t) / (base - t));
      }
      out += digit(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
    delta++;
    n++;
  }
  return out;
}
