// Reads an image archive written by oci.ts back (for tests and for the Dockerfile
// check): index, manifest, config, and each layer's entries with owner and mode.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LayerEntry {
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink' | 'other';
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  readonly target: string | undefined;
}

export interface ImageContents {
  readonly name: string;
  readonly config: { config: Record<string, unknown>; rootfs: { diff_ids: string[] } };
  readonly layers: readonly (readonly LayerEntry[])[];
  /** The layout directory the archive was unpacked to (removed by dispose()). */
  readonly dir: string;
  blob(digest: string): string;
  dispose(): void;
}

function parseVerbose(line: string): LayerEntry | undefined {
  // drwxr-xr-x 0/0               0 1980-01-01 00:00 app/
  const m = /^([-dlhcbp])([rwxsStT-]{9})\s+(\d+)\/(\d+)\s+(\d+)\s+\S+\s+\S+\s+(.*)$/.exec(line);
  if (m === null) return undefined;
  const [, t = '-', perms = '', uid = '0', gid = '0', size = '0', rest = ''] = m;
  let mode = 0;
  for (let i = 0; i < 9; i++) if (perms[i] !== '-' && perms[i] !== 'S' && perms[i] !== 'T') mode |= 1 << (8 - i);
  const [p = '', target] = t === 'l' ? rest.split(' -> ') : [rest, undefined];
  const type = t === 'd' ? 'dir' : t === 'l' ? 'symlink' : t === '-' || t === 'h' ? 'file' : 'other';
  return { path: `/${p.replace(/^\.\//, '').replace(/\/$/, '')}`, type, mode, uid: Number(uid), gid: Number(gid), size: Number(size), target };
}

export async function readImage(archive: string): Promise<ImageContents> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'outprobe-img-'));
  await run('tar', ['-xf', archive, '-C', dir]);
  const blob = (d: string): string => path.join(dir, 'blobs', 'sha256', d.replace(/^sha256:/, ''));
  const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations?: Record<string, string> }[] };
  const m0 = index.manifests[0];
  if (m0 === undefined) throw new Error(`${archive}: index.json lists no manifest`);
  const manifest = JSON.parse(readFileSync(blob(m0.digest), 'utf8')) as { config: { digest: string }; layers: { digest: string }[] };
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8')) as ImageContents['config'];
  const layers: LayerEntry[][] = [];
  for (const l of manifest.layers) {
    const { stdout } = await run('tar', ['--numeric-owner', '-tvf', blob(l.digest)], { maxBuffer: 256 << 20 });
    layers.push(stdout.split('\n').flatMap((line) => parseVerbose(line) ?? []));
  }
  return { name: m0.annotations?.['io.containerd.image.name'] ?? '', config, layers, dir, blob, dispose: () => { rmSync(dir, { recursive: true, force: true }); } };
}
