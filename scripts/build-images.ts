// Builds the real nodes' images (pause, podserve, outprobe) as OCI archives without a
// registry or Docker (docs/adr/0048-images-without-a-registry.md) and prints
// `<name> <archive>` per image. Usage: node scripts/build-images.ts [outprobe]
import { buildNodeImages, buildOutprobeImage } from '../test/support/images/index.ts';

const log = (m: string): void => { process.stderr.write(`[images] ${m}\n`); };
const t0 = Date.now();
if (process.argv[2] === 'outprobe') {
  const img = await buildOutprobeImage({ repoDir: new URL('..', import.meta.url).pathname, log });
  process.stdout.write(`${img.name} ${img.archive}\n`);
} else {
  const imgs = await buildNodeImages(log);
  for (const img of [imgs.pause, imgs.podserve, imgs.outprobe]) process.stdout.write(`${img.name} ${img.archive}\n`);
}
log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
