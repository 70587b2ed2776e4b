/**
 * Go's ways of turning bytes into text, for messages that must read exactly
 * as the kubelet's: `%q` (strconv.Quote) of response bytes, and the string a
 * Go `string(b)` of a body becomes once encoding/json (client-go, the API
 * server) writes it: each byte of an invalid UTF-8 sequence turns into one
 * U+FFFD. WHATWG decoding (Buffer#toString) replaces a maximal invalid
 * subpart with a single U+FFFD instead, so `e2 82` gives one where Go gives two.
 */
import { isUtf8 } from 'node:buffer';

const replacement = '\uFFFD';

/** Lead byte → [sequence length, lowest and highest second byte] (Go's utf8 accept ranges). */
function leadRange(c: number): readonly [number, number, number] | undefined {
  if (c >= 0xc2 && c <= 0xdf) return [2, 0x80, 0xbf];
  // e0: no overlongs (second byte >= a0); ed: no surrogates (second byte < a0).
  if (c >= 0xe0 && c <= 0xef) return [3, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf];
  if (c >= 0xf0 && c <= 0xf4) return [4, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf];
  return undefined;
}

/** The length of the valid UTF-8 sequence at `i` (Go's utf8.DecodeRune rules), or 0. */
function validSequence(b: Buffer, i: number): number {
  const c = b[i] ?? 0;
  if (c < 0x80) return 1;
  const range = leadRange(c);
  if (range === undefined) return 0;
  const [n, lo, hi] = range;
  const second = b[i + 1] ?? 0;
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return 0;
  return n;
}

/** The body as the kubelet's message holds it once stored: invalid bytes become one U+FFFD each. */
export function goBodyString(b: Buffer): string {
  if (isUtf8(b)) return b.toString('utf8');
  let out = '';
  let start = 0; // start of the pending run of valid bytes
  for (let i = 0; i < b.length; ) {
    const n = validSequence(b, i);
    if (n > 0) {
      i += n;
      continue;
    }
    out += b.toString('utf8', start, i) + replacement;
    i += 1;
    start = i;
  }
  return out + b.toString('utf8', start);
}

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const escapes: Readonly<Record<string, string>> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\',
};

/** One code point as strconv.Quote writes it. */
function quoteRune(ch: string): string {
  const known = escapes[ch];
  if (known !== undefined) return known;
  if (printable.test(ch)) return ch;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, '0')}`;
  return cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** Go's `%q` of a byte string (given as latin1 text, one char per byte): strconv.Quote. */
export function goQuote(latin1: string): string {
  const b = Buffer.from(latin1, 'latin1');
  let out = '"';
  for (let i = 0; i < b.length; ) {
    const n = validSequence(b, i);
    if (n === 0) {
      out += `\\x${(b[i] ?? 0).toString(16).padStart(2, '0')}`;
      i += 1;
      continue;
    }
    out += quoteRune(b.toString('utf8', i, i + n));
    i += n;
  }
  return `${out}"`;
}

/** Go's `%q` of a []string: `["a" "b"]`. */
export function goQuoteList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`;
}
