import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServingPair } from './pair.ts';

/** `tls.crt` and `tls.key` in `dir`, as a kubernetes.io/tls Secret mounted there (cert-manager's, or one's own). */
export async function readPairFrom(dir: string): Promise<ServingPair> {
  const [cert, key] = await Promise.all([readFile(join(dir, 'tls.crt'), 'utf8'), readFile(join(dir, 'tls.key'), 'utf8')]);
  return { cert, key };
}
