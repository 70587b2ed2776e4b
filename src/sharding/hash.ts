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
