// Images for the real nodes, built without a registry or a container engine
// (docs/adr/0048-images-without-a-registry.md), and their import into a node's
// containerd.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { podserveBinary } from '../podserve/binary.ts';
import { binaryImage, buildOutprobeImage } from './assemble.ts';
import type { WrittenImage } from './oci.ts';

export { buildOutprobeImage, imageCacheDir, IMAGE_REGISTRY, mergeEnv, npmNode, planOutprobeImage } from './assemble.ts';
export { parseDockerfile, runtimeStage, DockerfileError } from './dockerfile.ts';
export { BASE_ENV, BASE_PACKAGES, NONROOT_UID } from './base.ts';
export { writeImage, tarLayer, type WrittenImage, type Layer, type ImageConfig } from './oci.ts';
export { readImage, type ImageContents, type LayerEntry } from './inspect.ts';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '../../..');

async function goTool(script: string): Promise<string> {
  const { stdout } = await run('bash', [path.join(REPO, 'scripts', script)], { encoding: 'utf8', timeout: 900_000 });
  const bin = stdout.trim().split('\n').at(-1) ?? '';
  if (bin === '') throw new Error(`scripts/${script} printed no path`);
  return bin;
}

export interface NodeImages {
  readonly pause: WrittenImage;
  readonly podserve: WrittenImage;
  readonly outprobe: WrittenImage;
}

/** The sandbox image (static Go pause, user 65535 as upstream's). */
export async function buildPauseImage(): Promise<WrittenImage> {
  return binaryImage('pause', await goTool('build-pause.sh'), '65535:65535');
}

/** podserve as a container: `podserve serve …` in the pod's own namespaces (user 65532). */
export async function buildPodserveImage(): Promise<WrittenImage> {
  return binaryImage('podserve', await podserveBinary(), '65532:65532');
}

/** All three images (cached layers; the outprobe layers of src/ are made anew each time). */
export async function buildNodeImages(log?: (m: string) => void): Promise<NodeImages> {
  const pause = await buildPauseImage();
  const podserve = await buildPodserveImage();
  const outprobe = await buildOutprobeImage({ repoDir: REPO, ...(log === undefined ? {} : { log }) });
  return { pause, podserve, outprobe };
}

/** Imports an archive into the containerd at `socket`, namespace k8s.io (where the CRI plugin looks). */
export async function importImage(ctr: string, socket: string, archive: string): Promise<void> {
  await run(ctr, ['--address', socket, '-n', 'k8s.io', 'images', 'import', '--no-unpack=false', archive], { timeout: 300_000, maxBuffer: 16 << 20 })
    .catch((err: unknown) => { throw new Error(`ctr images import ${archive} into ${socket} failed: ${(err as { stderr?: string }).stderr ?? String(err)}`); });
}
export { imageDisagreements, productionPackages, C_RUNTIME } from './check.ts';
