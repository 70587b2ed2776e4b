// The Dockerfile's build, reproduced without a container engine (issue 6): copy what
// the Dockerfile copies into a temporary directory, `npm ci --omit=dev
// --ignore-scripts` as its deps stage does, then run `node src/main.ts --help` from
// that tree with the same Node 24 that runs this test (the distroless runtime's
// major). Proves the runtime needs nothing from devDependencies.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(path.join(repo, 'Dockerfile'), 'utf8');

/** Sources of the Dockerfile's COPY instructions that read the build context (not --from). */
function contextCopies(): string[] {
  const sources: string[] = [];
  for (const line of dockerfile.split('\n')) {
    const m = /^COPY\s+(.*)$/.exec(line.trim());
    if (m?.[1] === undefined || m[1].includes('--from=')) continue;
    const words = m[1].split(/\s+/).filter((w) => !w.startsWith('--'));
    sources.push(...words.slice(0, -1));
  }
  return sources;
}

void test('Dockerfile: distroless Node 24 runtime, numeric non-root user, production dependencies only', () => {
  assert.match(dockerfile, /^FROM gcr\.io\/distroless\/nodejs24-debian12[:@]/m);
  assert.match(dockerfile, /^USER 65532:65532$/m);
  assert.match(dockerfile, /^RUN npm ci --omit=dev --ignore-scripts\b/m);
  assert.match(dockerfile, /^ENTRYPOINT \["\/nodejs\/bin\/node", "src\/main\.ts"\]$/m);
  const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.doesNotMatch(runtimeStage, /^RUN /m, 'the distroless stage has no shell to RUN in');
  assert.deepEqual(contextCopies().sort(), ['package-lock.json', 'package.json', 'package.json', 'src'].sort());
});

void test('the image tree (npm ci --omit=dev) runs `node src/main.ts --help` with no devDependency present', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'outprobe-image-'));
  try {
    for (const src of new Set(contextCopies())) cpSync(path.join(repo, src), path.join(dir, src), { recursive: true });
    // npm itself runs on whatever Node is on PATH; the tree is then run with Node 24 below.
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 150_000,
    });
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>; devDependencies: Record<string, string>;
    };
    const installed = readdirSync(path.join(dir, 'node_modules')).flatMap((n) =>
      n.startsWith('@') ? readdirSync(path.join(dir, 'node_modules', n)).map((m) => `${n}/${m}`) : [n]);
    // A devDependency may be installed only where a runtime dependency needs it too: the
    // lockfile then marks its entry as not dev (@types/node, which @kubernetes/client-node's
    // @types/* dependencies require). Any other devDependency in the tree is a leak.
    const lock = JSON.parse(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
    for (const dep of Object.keys(pkg.devDependencies)) {
      const entry = lock.packages[`node_modules/${dep}`];
      const neededAtRuntime = Object.hasOwn(pkg.dependencies, dep) || (entry !== undefined && entry.dev !== true && entry.devOptional !== true);
      assert.ok(!installed.includes(dep) || neededAtRuntime, `devDependency ${dep} must not be installed`);
    }
    assert.ok(!installed.includes('typescript') && !installed.includes('eslint'), 'no build or lint tool in the image tree');
    for (const dep of Object.keys(pkg.dependencies)) assert.ok(installed.includes(dep), `dependency ${dep} installed`);
    assert.equal(existsSync(path.join(dir, 'node_modules', '.bin', 'node')), false, 'no Node binary from the `node` devDependency');
    assert.equal(existsSync(path.join(dir, 'test')), false);

    // --help imports every module main.ts does (static ESM imports), so a missing runtime dependency fails here.
    const r = spawnSync(process.execPath, ['src/main.ts', '--help'], {
      cwd: dir, encoding: 'utf8', timeout: 30_000, env: { PATH: '/nonexistent', HOME: dir, NODE_ENV: 'production' },
    });
    assert.equal(r.status, 0, `exit ${String(r.status)}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage: outprobe \[flags\]/);
    assert.match(r.stdout, /--enable-exec-probes/);
    assert.doesNotMatch(r.stderr, /ExperimentalWarning|Error/);

    // A bad flag: the validated-config path exits 2 with a message, still from the pruned tree.
    const bad = spawnSync(process.execPath, ['src/main.ts', '--concurrency', 'lots'], { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { PATH: '/nonexistent', HOME: dir } });
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /concurrency/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
