/**
 * Go's net/url escaping rules (url.go shouldEscape, unescape, escape,
 * validEncoded), byte for byte, for the parser in go-url.ts. Strings here
 * are Latin-1 "byte strings" (one char per UTF-8 byte), as Go indexes bytes.
 */

export type Encoding = 'path' | 'host' | 'zone' | 'userPassword' | 'fragment';

export class EscapeError extends Error {}

const unreserved = /^[A-Za-z0-9\-_.~]$/;
/** Per mode, the other bytes Go leaves unescaped (the table gen_encoding_table.go generates). */
const kept: Readonly<Record<Encoding, string>> = {
  path: '$&+,/:;=@',
  host: `!$&'()*+,;=:[]<>"`,
  zone: `!$&'()*+,;=:[]<>"`,
  userPassword: '$&+,;=',
  fragment: '$&+,/:;=?@!()*',
};

/** url.shouldEscape for the modes the parser uses (encodePathSegment and encodeQueryComponent are not needed). */
export function shouldEscape(c: string, mode: Encoding): boolean {
  return !unreserved.test(c) && !kept[mode].includes(c);
}

const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const goQuoted = (s: string): string => JSON.stringify(s);

/** url.unescape: throws EscapeError with Go's message for what Go rejects. */
export function unescape(s: string, mode: Encoding): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const c = s.charAt(i);
    if (c === '%') {
      out += String.fromCharCode(escapedByte(s, i, mode));
      i += 3;
      continue;
    }
    if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode)) {
      throw new EscapeError(`invalid character ${goQuoted(c)} in host name`);
    }
    out += c;
    i++;
  }
  return out;
}

/** The byte a `%XX` at `i` stands for, or Go's error. */
function escapedByte(s: string, i: number, mode: Encoding): number {
  const seq = s.slice(i, i + 3);
  if (!isHex(s[i + 1]) || !isHex(s[i + 2])) throw new EscapeError(`invalid URL escape ${goQuoted(seq)}`);
  const v = Number.parseInt(seq.slice(1), 16);
  // RFC 3986 §3.2.2: in a host, %-encoding is only for non-ASCII bytes (and %25 for a zone).
  if (mode === 'host' && v < 0x80 && seq !== '%25') throw new EscapeError(`invalid URL escape ${goQuoted(seq)}`);
  if (mode === 'zone' && seq !== '%25' && v !== 0x20 && shouldEscape(String.fromCharCode(v), 'host')) {
    throw new EscapeError(`invalid URL escape ${goQuoted(seq)}`);
  }
  return v;
}

/** url.escape: %XX (upper case) for every byte the mode escapes. */
export function escape(s: string, mode: Encoding): string {
  let out = '';
  for (const c of s) {
    out += shouldEscape(c, mode) ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : c;
  }
  return out;
}

const subDelims = `!$&'()*+,;=:@[]%`;

/** url.validEncoded: no byte that escape() would have to escape (sub-delims, brackets and % allowed). */
export function validEncoded(s: string, mode: Encoding): boolean {
  for (const c of s) if (!subDelims.includes(c) && shouldEscape(c, mode)) return false;
  return true;
}

/** The escaped form Go's EscapedPath/EscapedFragment would return for an escaped input that unescaped cleanly. */
export function canonicalEscaped(p: string, mode: 'path' | 'fragment'): string {
  const decoded = unescape(p, mode); // setPath/setFragment: a bad escape is an error even where validEncoded allows '%'
  return validEncoded(p, mode) ? p : escape(decoded, mode);
}

/** UTF-8 bytes of a JS string as a Latin-1 string, and back. */
export function toBytes(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}
export function fromBytes(s: string): string {
  return Buffer.from(s, 'latin1').toString('utf8');
}
