// The Dockerfile reader of the image assembler (docs/adr/0048-images-without-a-registry.md):
// what it takes from the repository's Dockerfile, and the clear error for anything it
// cannot reproduce.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { DockerfileError, parseDockerfile, planOutprobeImage, runtimeStage } from '../../support/images/index.ts';
import { mergeEnv } from '../../support/images/index.ts';

const dockerfile = readFileSync(new URL('../../../Dockerfile', import.meta.url), 'utf8');

void describe('parseDockerfile', () => {
  it('reads the repository\'s Dockerfile: two stages, the runtime stage\'s settings, the COPYs with their owners', () => {
    const d = parseDockerfile(dockerfile);
    assert.equal(d.args['NODE_VERSION'], '24.21.0');
    assert.deepEqual(d.stages.map((s) => s.name), ['deps', 'runtime']);
    const r = runtimeStage(d);
    assert.match(r.base, /^gcr\.io\/distroless\/nodejs24-debian12/);
    assert.equal(r.workdir, '/app');
    assert.equal(r.user, '65532:65532');
    assert.deepEqual(r.env, [['NODE_ENV', 'production']]);
    assert.deepEqual(r.expose, ['8080/tcp']);
    assert.deepEqual(r.entrypoint, ['/nodejs/bin/node', 'src/main.ts']);
    assert.deepEqual(r.copies.map((c) => [c.from, c.sources, c.dest, c.chown]), [
      ['deps', ['/app/node_modules'], '/app/node_modules', '0:0'],
      [undefined, ['package.json'], '/app', '0:0'],
      [undefined, ['src'], '/app/src', '0:0'],
    ]);
  });

  it('joins continuations, substitutes ARGs, reads quoted ENV values', () => {
    const d = parseDockerfile('ARG V=1\nFROM x:${V} AS a\nENV A="b c" D=e\nRUN one \\\n  two\nFROM y\nCOPY --from=a /o /p\n');
    const first = d.stages[0];
    assert.ok(first !== undefined);
    assert.equal(first.base, 'x:1');
    assert.deepEqual(first.env, [['A', 'b c'], ['D', 'e']]);
    assert.deepEqual(first.runs, ['one    two']);
  });

  it('refuses what the assembler cannot reproduce, naming the line', () => {
    for (const [text, msg] of [
      ['FROM x\nADD a /b\n', /line 2: ADD is not reproduced/],
      ['FROM x\nENTRYPOINT node main.ts\n', /line 2: ENTRYPOINT must be in exec form/],
      ['FROM x:${NOPE}\n', /\$\{NOPE\} is not a declared ARG/],
      ['FROM x\nCOPY --link a /b\n', /COPY flag --link/],
      ['WORKDIR /x\n', /before the first FROM/],
    ] as const) assert.throws(() => parseDockerfile(text), (err: unknown) => err instanceof DockerfileError && msg.test(err.message));
  });
});

void describe('planOutprobeImage', () => {
  it('accepts the repository\'s Dockerfile with the npm node package\'s version on Debian 12', () => {
    const plan = planOutprobeImage(dockerfile, { version: '24.21.0' }, '12');
    assert.equal(plan.nodeMajor, '24');
  });

  it('names each disagreement: Node version, Debian release, a RUN it cannot reproduce, a runtime base it cannot rebuild', () => {
    assert.throws(() => planOutprobeImage(dockerfile, { version: '24.20.0' }, '12'), /NODE_VERSION is 24\.21\.0 but the npm node package is 24\.20\.0/);
    assert.throws(() => planOutprobeImage(dockerfile, { version: '24.21.0' }, '13'), /Debian 12 but this host's packages are Debian 13/);
    assert.throws(() => planOutprobeImage(dockerfile.replace('RUN npm ci', 'RUN yarn install && npm ci'), { version: '24.21.0' }, '12'), /deps stage RUN 'yarn install/);
    assert.throws(() => planOutprobeImage(dockerfile.replace(/^FROM gcr\.io\/distroless\/\S+/m, 'FROM node:24-slim'), { version: '24.21.0' }, '12'), /is not a distroless nodejs/);
  });

  it('merges ENV over the base environment, a later value winning', () => {
    assert.deepEqual(mergeEnv(['PATH=/bin', 'A=1'], [['A', '2'], ['B', '3']]), ['PATH=/bin', 'A=2', 'B=3']);
  });
});
