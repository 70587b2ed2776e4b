/**
 * A fast, stable 64-bit hash of (member identity, key) for rendezvous hashing.
 *
 * FNV-1a 64 over the UTF-8 bytes of `identity`, a 0x00 separator and `key`
 * (the separator keeps ("ab","c") and ("a","bc") apart), computed on four
 * 16-bit limbs so no BigInt is needed per byte, then finished with
 * MurmurHash3's fmix64. FNV-1a alone mixes its last bytes weakly; the
 * finalizer gives every output bit an even chance, which rendezvous hashing
 * needs for an even split. The value is part of the protocol between
 * replicas: every replica must compute the same number, so never change it
 * without a rolling migration.
 */
const encoder = new TextEncoder();
const mask64 = (1n << 64n) - 1n;

export function hash64(identity: string, key: string): bigint {
  hashParts(identity, key, parts);
  return (BigInt(parts[0] ?? 0) << 32n) | BigInt(parts[1] ?? 0);
}

const parts = new Float64Array(2);

/**
 * hash64 as two numbers, its high and low 32 bits, into `out` ([high, low]):
 * what rendezvous compares, with no BigInt. Pod UIDs and replica identities
 * are ASCII: they are hashed from their char codes on 16-bit limbs, with no
 * encoding and no allocation (issue 31: the byte path with TextEncoder and
 * BigInt arithmetic took about 3.4 us a hash, 1 s to assign 100,000 pods
 * over 3 members). Any other string takes the byte path; the value is the
 * same either way (a unit test compares them).
 */
export function hashParts(identity: string, key: string, out: Float64Array): void {
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const split = identity.length;
  const n = split + 1 + key.length;
  for (let i = 0; i < n; i++) {
    const c = i < split ? identity.charCodeAt(i) : i === split ? 0 : key.charCodeAt(i - split - 1);
    if (c >= 0x80) {
      const h = hash64Bytes(identity, key);
      out[0] = Number(h >> 32n);
      out[1] = Number(h & 0xffffffffn);
      return;
    }
    // h ^= byte; h *= 0x100000001b3 mod 2^64 = h * 0x1b3 + (h << 40); 0x100 << 32 is limb 2.
    h0 ^= c;
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3;
    const t2 = h2 * 0x1b3 + h0 * 0x100;
    const t3 = h3 * 0x1b3 + h1 * 0x100;
    h0 = t0 & 0xffff;
    const c1 = t1 + (t0 >>> 16);
    h1 = c1 & 0xffff;
    const c2 = t2 + (c1 >>> 16);
    h2 = c2 & 0xffff;
    h3 = (t3 + (c2 >>> 16)) & 0xffff;
  }
  // fmix64: h ^= h >> 33; h *= k1; h ^= h >> 33; h *= k2; h ^= h >> 33 (k as 16-bit limbs, low first).
  for (let round = 0; round < 3; round++) {
    h0 ^= ((h2 >>> 1) | (h3 << 15)) & 0xffff;
    h1 ^= h3 >>> 1;
    if (round === 2) break;
    const k = round === 0 ? fmixK1 : fmixK2;
    const [k0, k1, k2, k3] = k;
    // Each product is below 2^32 and each sum below 2^35: exact in a double.
    const r0 = h0 * k0;
    const r1 = h0 * k1 + h1 * k0 + Math.floor(r0 / 0x10000);
    const r2 = h0 * k2 + h1 * k1 + h2 * k0 + Math.floor(r1 / 0x10000);
    const r3 = h0 * k3 + h1 * k2 + h2 * k1 + h3 * k0 + Math.floor(r2 / 0x10000);
    h0 = r0 % 0x10000;
    h1 = r1 % 0x10000;
    h2 = r2 % 0x10000;
    h3 = r3 % 0x10000;
  }
  out[0] = h3 * 0x10000 + h2;
  out[1] = h1 * 0x10000 + h0;
}

/** fmix64's constants 0xff51afd7ed558ccd and 0xc4ceb9fe1a85ec53 as 16-bit limbs, low first. */
const fmixK1 = [0x8ccd, 0xed55, 0xafd7, 0xff51] as const;
const fmixK2 = [0xec53, 0x1a85, 0xb9fe, 0xc4ce] as const;

/** The byte path: FNV-1a 64 over the UTF-8 bytes, then fmix64, in BigInt. */
export function hash64Bytes(identity: string, key: string): bigint {
  const a = encoder.encode(identity);
  const b = encoder.encode(key);
  const bytes = new Uint8Array(a.length + 1 + b.length);
  bytes.set(a, 0);
  bytes.set(b, a.length + 1); // bytes[a.length] stays 0: the separator
  return fmix64(fnv1a64(bytes));
}

/** Plain FNV-1a 64 (published test vectors apply). */
export function fnv1a64(bytes: Uint8Array): bigint {
  // Offset basis 0xcbf29ce484222325 offset basis 0xcbf29ce484222325, as limbs h0 (low) .. h3 (high).
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  const step = (byte: number): void => {
    h0 ^= byte;
    // h * 0x100000001b3 mod 2^64 = h * 0x1b3 + (h << 40); 0x100 << 32 is limb 2.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3;
    const t2 = h2 * 0x1b3 + h0 * 0x100;
    const t3 = h3 * 0x1b3 + h1 * 0x100;
    h0 = t0 & 0xffff;
    const c1 = t1 + (t0 >>> 16);
    h1 = c1 & 0xffff;
    const c2 = t2 + (c1 >>> 16);
    h2 = c2 & 0xffff;
    h3 = (t3 + (c2 >>> 16)) & 0xffff;
  };
  for (const byte of bytes) step(byte);
  return (BigInt(h3) << 48n) | (BigInt(h2) << 32n) | (BigInt(h1) << 16n) | BigInt(h0);
}

/** MurmurHash3's 64-bit finalizer: an avalanche over all 64 bits. */
function fmix64(x: bigint): bigint {
  let h = x;
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & mask64;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & mask64;
  h ^= h >> 33n;
  return h;
}
