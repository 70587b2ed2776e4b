/**
 * The few DER (ASN.1) encodings an X.509 certificate needs. Node can read
 * certificates (X509Certificate) but not write them, and a self-signed CA
 * plus one serving certificate does not justify a dependency (ADR 0021).
 */

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const sequence = (...items: readonly Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: readonly Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** `[n] EXPLICIT`, constructed. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** `[n] IMPLICIT`, primitive (GeneralName's dNSName [2] and iPAddress [7]). */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from big-endian bytes (a leading 0 when the top bit is set). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n]));

/** A BIT STRING of whole bytes, or of the named-bit flags in `flags` (DER drops trailing zero bits). */
export function bitString(content: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));
}

export function namedBits(byte: number): Buffer {
  let unused = 0;
  while (unused < 8 && ((byte >> unused) & 1) === 0) unused++;
  return bitString(Buffer.from([byte]), unused === 8 ? 0 : unused);
}

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const [a = 0, b = 0, ...rest] = parts;
  const out: number[] = [a * 40 + b];
  for (const p of rest) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5), whole seconds, Z. */
export function time(ms: number): Buffer {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // 2026-11-25T14:15:51.000Z
  const year = Number(iso.slice(0, 4));
  const rest = iso.slice(5, 19).replace(/[-T:]/g, '');
  return year < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2, 4)}${rest}Z`, 'ascii')) : tlv(0x18, Buffer.from(`${year}${rest}Z`, 'ascii'));
}
