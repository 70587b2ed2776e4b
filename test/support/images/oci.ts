// Writes OCI image archives without a container engine
// (docs/adr/0048-images-without-a-registry.md): each layer is an uncompressed tar
// made by GNU tar from a staged directory (sorted names, one fixed mtime, numeric
// owners as staged), and the archive is an OCI image layout (oci-layout, index.json,
// blobs/sha256/…) packed as one tar, which `ctr images import` reads. The index names
// the image twice: io.containerd.image.name (what containerd 1.6+ uses) and
// org.opencontainers.image.ref.name.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, linkSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync, copyFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Every layer's files carry this mtime (1980-01-01, like other reproducible builders). */
export const LAYER_MTIME = 315532800;

export interface Layer {
  /** sha256:<hex> of the uncompressed tar (the layer's diff_id and, uncompressed, its blob digest). */
  readonly digest: string;
  readonly size: number;
  readonly file: string;
  /** What made it, for the config's history. */
  readonly createdBy: string;
}

export interface ImageConfig {
  readonly User?: string;
  readonly Env?: readonly string[];
  readonly Entrypoint?: readonly string[];
  readonly Cmd?: readonly string[];
  readonly WorkingDir?: string;
  readonly ExposedPorts?: Readonly<Record<string, Record<string, never>>>;
  readonly Labels?: Readonly<Record<string, string>>;
}

export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha256:${h.digest('hex')}`;
}

/** Tars the entries of `stage` into `out` deterministically; ownership and modes are taken as staged. */
export async function tarLayer(stage: string, out: string, createdBy: string): Promise<Layer> {
  const entries = readdirSync(stage).sort();
  if (entries.length === 0) throw new Error(`layer '${createdBy}': nothing staged in ${stage}`);
  const tmp = `${out}.tmp-${process.pid}`;
  await run('tar', ['--create', `--file=${tmp}`, `--directory=${stage}`, '--sort=name', '--numeric-owner',
    `--mtime=@${LAYER_MTIME}`, '--format=posix', '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    '--no-acls', '--no-xattrs', '--no-selinux', '--', ...entries], { maxBuffer: 16 << 20 });
  renameSync(tmp, out);
  return { digest: await sha256File(out), size: statSync(out).size, file: out, createdBy };
}

function blobPath(layout: string, digest: string): string {
  return path.join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));
}

function putJson(layout: string, value: unknown): { digest: string; size: number } {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  writeFileSync(blobPath(layout, digest), bytes);
  return { digest, size: bytes.length };
}

export interface WrittenImage {
  readonly name: string;
  readonly archive: string;
  readonly configDigest: string;
  readonly manifestDigest: string;
}

/** Writes the image `name` from `layers` (bottom first) and `config` into the archive `out`. */
export async function writeImage(name: string, layers: readonly Layer[], config: ImageConfig, out: string): Promise<WrittenImage> {
  const layout = `${out}.layout-${process.pid}`;
  rmSync(layout, { recursive: true, force: true });
  mkdirSync(path.join(layout, 'blobs', 'sha256'), { recursive: true });
  try {
    for (const l of layers) {
      const dst = blobPath(layout, l.digest);
      try { linkSync(l.file, dst); } catch { copyFileSync(l.file, dst); }
    }
    const created = new Date(LAYER_MTIME * 1000).toISOString();
    const cfg = putJson(layout, {
      created, architecture: 'amd64', os: 'linux', config,
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
      history: layers.map((l) => ({ created, created_by: l.createdBy })),
    });
    const manifest = putJson(layout, {
      schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...cfg },
      layers: layers.map((l) => ({ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: l.digest, size: l.size })),
    });
    const tag = name.slice(name.lastIndexOf(':') + 1);
    writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    writeFileSync(path.join(layout, 'index.json'), JSON.stringify({
      schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [{
        mediaType: 'application/vnd.oci.image.manifest.v1+json', ...manifest,
        platform: { architecture: 'amd64', os: 'linux' },
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': tag },
      }],
    }));
    const tmp = `${out}.tmp-${process.pid}`;
    await run('tar', ['--create', `--file=${tmp}`, `--directory=${layout}`, '--sort=name', '--numeric-owner',
      '--owner=0', '--group=0', `--mtime=@${LAYER_MTIME}`, 'oci-layout', 'index.json', 'blobs']);
    renameSync(tmp, out);
    return { name, archive: out, configDigest: cfg.digest, manifestDigest: manifest.digest };
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}
