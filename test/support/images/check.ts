// Compares the Dockerfile with an assembled image read back from its archive
// (docs/adr/0048-images-without-a-registry.md): every way they can disagree is listed,
// so a test fails when someone changes one and not the other. Checked: ENTRYPOINT,
// WORKDIR, USER, ENV, EXPOSE; every COPY from the build context (same files, same
// bytes, the --chown owner); the deps stage's node_modules (exactly the lockfile's
// production packages, no devDependency); Node's version against ARG NODE_VERSION
// (by running the image's /nodejs/bin/node); the C runtime Node needs and the nonroot
// user a distroless base carries.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseDockerfile, runtimeStage } from './dockerfile.ts';
import type { ImageContents, LayerEntry } from './inspect.ts';

/** Shared objects Node 24 links (ldd of the npm package's binary) and where Debian 12 keeps them. */
export const C_RUNTIME: readonly string[] = [
  '/usr/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libm.so.6', '/usr/lib/x86_64-linux-gnu/libdl.so.2',
  '/usr/lib/x86_64-linux-gnu/libpthread.so.0', '/usr/lib/x86_64-linux-gnu/libgcc_s.so.1', '/usr/lib/x86_64-linux-gnu/libstdc++.so.6',
  '/usr/lib64/ld-linux-x86-64.so.2',
];

function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = path.join(rel, e.name);
    return e.isDirectory() ? filesUnder(dir, r) : e.isFile() ? [r] : [];
  });
}

function sha(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Merged view of the layers: path → entry and the layer index that wrote it last. */
function flatten(img: ImageContents): Map<string, { e: LayerEntry; layer: number }> {
  const m = new Map<string, { e: LayerEntry; layer: number }>();
  img.layers.forEach((entries, layer) => { for (const e of entries) m.set(e.path, { e, layer }); });
  return m;
}

/** Resolves a path through the image's symlinks (absolute or relative targets). */
function resolve(fs: Map<string, { e: LayerEntry }>, p: string, depth = 0): string {
  if (depth > 16) return p;
  const parts = p.split('/').filter(Boolean);
  let cur = '';
  for (let i = 0; i < parts.length; i++) {
    cur = `${cur}/${parts[i] ?? ''}`;
    const hit = fs.get(cur);
    if (hit?.e.type === 'symlink' && hit.e.target !== undefined) {
      const t = hit.e.target.startsWith('/') ? hit.e.target : path.posix.join(path.posix.dirname(cur), hit.e.target);
      return resolve(fs, path.posix.join(t, ...parts.slice(i + 1)), depth + 1);
    }
  }
  return cur;
}

/** Production packages the lockfile installs with --omit=dev (its `node_modules/...` entries not marked dev). */
export function productionPackages(lockText: string): string[] {
  const lock = JSON.parse(lockText) as { packages: Record<string, { dev?: boolean; optional?: boolean; os?: string[]; cpu?: string[] }> };
  return Object.entries(lock.packages).flatMap(([k, v]) => {
    if (!k.startsWith('node_modules/') || v.dev === true) return [];
    if (v.optional === true && ((v.os !== undefined && !v.os.includes('linux')) || (v.cpu !== undefined && !v.cpu.includes('x64')))) return [];
    return [k];
  }).sort();
}

/** Every disagreement between the Dockerfile (text) and the image; [] when they agree. */
export function imageDisagreements(dockerfile: string, img: ImageContents, repoDir: string): string[] {
  const out: string[] = [];
  const d = parseDockerfile(dockerfile);
  const r = runtimeStage(d);
  const cfg = img.config.config as { Entrypoint?: string[]; WorkingDir?: string; User?: string; Env?: string[]; ExposedPorts?: Record<string, unknown> };
  if (JSON.stringify(cfg.Entrypoint) !== JSON.stringify(r.entrypoint)) out.push(`ENTRYPOINT ${JSON.stringify(r.entrypoint)} but the image's is ${JSON.stringify(cfg.Entrypoint)}`);
  if (r.workdir !== undefined && cfg.WorkingDir !== r.workdir) out.push(`WORKDIR ${r.workdir} but the image's is ${String(cfg.WorkingDir)}`);
  if (r.user !== undefined && cfg.User !== r.user) out.push(`USER ${r.user} but the image's is ${String(cfg.User)}`);
  for (const [k, v] of r.env) if (!(cfg.Env ?? []).includes(`${k}=${v}`)) out.push(`ENV ${k}=${v} missing from the image's ${JSON.stringify(cfg.Env)}`);
  const exposed = Object.keys(cfg.ExposedPorts ?? {}).sort();
  if (JSON.stringify(exposed) !== JSON.stringify([...r.expose].sort())) out.push(`EXPOSE ${r.expose.join(' ')} but the image exposes ${exposed.join(' ')}`);
  const fs = flatten(img);
  for (const c of r.copies) {
    const [uid, gid] = (c.chown ?? '0:0').split(':').map(Number);
    const owned = [...fs.values()].filter((x) => x.e.path === c.dest || x.e.path.startsWith(`${c.dest}/`));
    if (owned.length === 0) out.push(`COPY to ${c.dest} (line ${c.line}): nothing there in the image`);
    const wrong = owned.filter((x) => x.e.uid !== uid || x.e.gid !== gid);
    if (wrong.length > 0) out.push(`COPY --chown=${c.chown ?? '(none)'} to ${c.dest}: ${wrong.length} entries owned otherwise, e.g. ${wrong[0]?.e.path ?? ''} ${wrong[0]?.e.uid ?? ''}:${wrong[0]?.e.gid ?? ''}`);
    if (c.from !== undefined) continue;
    for (const s of c.sources) {
      const src = path.join(repoDir, s);
      const files = statSync(src).isDirectory() ? filesUnder(src).map((f) => ({ host: path.join(src, f), image: path.posix.join(c.dest, f) }))
        : [{ host: src, image: c.destIsDir ? path.posix.join(c.dest, path.basename(s)) : c.dest }];
      for (const f of files) {
        const hit = fs.get(f.image);
        if (hit === undefined) { out.push(`COPY ${s}: ${f.image} is missing from the image`); continue; }
        const layerBlob = img.blob(img.config.rootfs.diff_ids[hit.layer] ?? '');
        const inImage = execFileSync('tar', ['-xOf', layerBlob, f.image.slice(1)], { maxBuffer: 64 << 20 });
        if (createHash('sha256').update(inImage).digest('hex') !== sha(f.host)) out.push(`COPY ${s}: ${f.image} differs from ${path.relative(repoDir, f.host)}`);
      }
      const imageFiles = [...fs.values()].filter((x) => x.e.type === 'file' && x.e.path.startsWith(`${c.dest}/`)).length;
      if (statSync(src).isDirectory() && imageFiles !== files.length) out.push(`COPY ${s}: the image has ${imageFiles} files under ${c.dest}, the context ${files.length}`);
    }
  }
  const wantModules = productionPackages(readFileSync(path.join(repoDir, 'package-lock.json'), 'utf8'));
  const workdir = r.workdir ?? '/';
  const packageDir = /^node_modules\/(@[^/]+\/)?[^/@][^/]*(\/node_modules\/(@[^/]+\/)?[^/@][^/]*)*$/; // not a package's own subfolder (dist/esm/package.json)
  const haveModules = [...fs.values()].filter((x) => x.e.type === 'file' && x.e.path.startsWith(`${workdir}/node_modules/`) && x.e.path.endsWith('/package.json'))
    .map((x) => path.posix.relative(workdir, path.posix.dirname(x.e.path)))
    .filter((p) => packageDir.test(p))
    .sort();
  const missing = wantModules.filter((m) => !haveModules.includes(m));
  const extra = haveModules.filter((m) => !wantModules.includes(m));
  if (missing.length > 0) out.push(`node_modules lacks production packages: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` (+${missing.length - 5})` : ''}`);
  if (extra.length > 0) out.push(`node_modules has packages the lockfile does not install with --omit=dev: ${extra.slice(0, 5).join(', ')}${extra.length > 5 ? ` (+${extra.length - 5})` : ''}`);
  const entry = r.entrypoint?.[0];
  if (entry !== undefined) {
    const real = resolve(fs, entry);
    const hit = fs.get(real);
    if (hit === undefined) out.push(`the ENTRYPOINT's program ${entry} is not in the image`);
    else {
      const version = execFileSync('sh', ['-c', `tar -xOf '${img.blob(img.config.rootfs.diff_ids[hit.layer] ?? '')}' '${real.slice(1)}' > '${img.dir}/node' && chmod +x '${img.dir}/node' && '${img.dir}/node' --version`], { encoding: 'utf8' }).trim();
      const want = d.args['NODE_VERSION'];
      if (want !== undefined && version !== `v${want}`) out.push(`ARG NODE_VERSION=${want} but the image's ${entry} is ${version}`);
    }
  }
  for (const lib of C_RUNTIME) if (fs.get(resolve(fs, lib)) === undefined) out.push(`the C runtime file ${lib} is missing`);
  const passwd = fs.get('/etc/passwd');
  if (passwd === undefined) out.push('/etc/passwd is missing');
  else {
    const text = execFileSync('tar', ['-xOf', img.blob(img.config.rootfs.diff_ids[passwd.layer] ?? ''), 'etc/passwd'], { encoding: 'utf8' });
    const uid = (r.user ?? '').split(':')[0] ?? '';
    if (/^\d+$/.test(uid) && !text.split('\n').some((l) => l.split(':')[2] === uid)) out.push(`USER ${r.user ?? ''}: no user ${uid} in the image's /etc/passwd`);
  }
  return out;
}
