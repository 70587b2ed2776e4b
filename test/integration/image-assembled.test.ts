// outprobe's image assembled without Docker (issue 29; docs/adr/0048-images-without-a-registry.md)
// agrees with the Dockerfile on everything the Dockerfile says: entrypoint, workdir, user, env,
// exposed port, the files of every COPY and their owner, the production node_modules, the Node
// version, the C runtime and the nonroot user of the distroless base. A Dockerfile changed
// without the assembler (or the reverse) fails here; so does a broken image (a file left out).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildOutprobeImage, imageDisagreements, readImage } from '../support/images/index.ts';
import type { ImageContents } from '../support/images/index.ts';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(path.join(repo, 'Dockerfile'), 'utf8');

describe('outprobe\'s image assembled from the Dockerfile', { timeout: 600_000 }, () => {
  let img: ImageContents;
  before(async () => {
    const built = await buildOutprobeImage({ repoDir: repo, log: (m) => { process.stderr.write(`# ${m}\n`); } });
    img = await readImage(built.archive);
  });
  after(() => { img.dispose(); });

  it('agrees with the Dockerfile on every point', () => {
    assert.deepEqual(imageDisagreements(dockerfile, img, repo), []);
  });

  it('a Dockerfile that says otherwise is caught, point by point', () => {
    const changed = dockerfile
      .replace('ENTRYPOINT ["/nodejs/bin/node", "src/main.ts"]', 'ENTRYPOINT ["/nodejs/bin/node", "src/other.ts"]')
      .replace('USER 65532:65532', 'USER 1000:1000')
      .replace('ENV NODE_ENV=production', 'ENV NODE_ENV=production TZ=UTC')
      .replace('EXPOSE 8080', 'EXPOSE 8080 9443')
      .replace('ARG NODE_VERSION=24.21.0', 'ARG NODE_VERSION=24.20.0')
      .replace('WORKDIR /app\nCOPY --from', 'WORKDIR /srv\nCOPY --from');
    const found = imageDisagreements(changed, img, repo).join('\n');
    for (const what of [/ENTRYPOINT/, /USER 1000:1000/, /ENV TZ=UTC/, /EXPOSE/, /NODE_VERSION=24\.20\.0/, /WORKDIR \/srv/]) assert.match(found, what);
  });

  it('an image missing a file is caught', async () => {
    const broken = await buildOutprobeImage({ repoDir: repo, omit: ['/app/src/main.ts'] });
    const b = await readImage(broken.archive);
    try {
      assert.match(imageDisagreements(dockerfile, b, repo).join('\n'), /\/app\/src\/main\.ts is missing from the image/);
    } finally {
      b.dispose();
    }
  });
});
