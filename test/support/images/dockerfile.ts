// Reads the repository's Dockerfile into what the image assembler reproduces
// (docs/adr/0048-images-without-a-registry.md), pure. Only the instructions the
// assembler knows are accepted; any other one, or a form it cannot reproduce, is an
// error naming its line, so the Dockerfile and the assembled image cannot drift apart
// in silence.

export interface CopyStep {
  /** `--from=<stage>`, or undefined for the build context. */
  readonly from: string | undefined;
  /** `--chown=<user>:<group>` as written. */
  readonly chown: string | undefined;
  readonly sources: readonly string[];
  /** Absolute destination (resolved against WORKDIR). */
  readonly dest: string;
  /** The destination is a directory the sources go into (it ends in `/`, or there are several sources). */
  readonly destIsDir: boolean;
  readonly line: number;
}

export interface Stage {
  readonly name: string | undefined;
  readonly base: string;
  readonly workdir: string | undefined;
  readonly user: string | undefined;
  readonly env: readonly (readonly [string, string])[];
  readonly expose: readonly string[];
  readonly entrypoint: readonly string[] | undefined;
  readonly copies: readonly CopyStep[];
  readonly runs: readonly string[];
}

export interface Dockerfile {
  readonly args: Readonly<Record<string, string>>;
  readonly stages: readonly Stage[];
}

export class DockerfileError extends Error {
  override readonly name = 'DockerfileError';
}

interface Instr { readonly op: string; readonly rest: string; readonly line: number }

/** Logical instructions: comments and blank lines dropped, `\` continuations joined. */
function instructions(text: string): Instr[] {
  const out: Instr[] = [];
  let buf = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (buf === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (buf !== '' && line.trimStart().startsWith('#')) return; // comment inside a continuation
    if (buf === '') start = i + 1;
    if (line.endsWith('\\')) {
      buf += `${line.slice(0, -1)} `;
      return;
    }
    buf += line;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(buf);
    if (m?.[1] === undefined || m[2] === undefined) throw new DockerfileError(`line ${start}: cannot read '${buf.trim()}'`);
    out.push({ op: m[1].toUpperCase(), rest: m[2].trim(), line: start });
    buf = '';
  });
  return out;
}

function substitute(s: string, vars: Readonly<Record<string, string>>, line: number): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, a: string | undefined, b: string | undefined) => {
    const name = a ?? b ?? '';
    const v = Object.hasOwn(vars, name) ? vars[name] : undefined;
    if (v === undefined) throw new DockerfileError(`line ${line}: \${${name}} is not a declared ARG`);
    return v;
  });
}

function jsonArray(rest: string, line: number, what: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(rest);
  } catch {
    throw new DockerfileError(`line ${line}: ${what} must be in exec form (a JSON array): ${rest}`);
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new DockerfileError(`line ${line}: ${what} must be a JSON array of strings`);
  return v;
}

function posixJoin(dir: string, p: string): string {
  const abs = p.startsWith('/') ? p : `${dir.replace(/\/$/, '')}/${p}`;
  const parts: string[] = [];
  for (const seg of abs.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return `/${parts.join('/')}`;
}

function parseCopy(rest: string, workdir: string | undefined, line: number): CopyStep {
  const words = rest.split(/\s+/);
  let from: string | undefined;
  let chown: string | undefined;
  const plain: string[] = [];
  for (const w of words) {
    if (w.startsWith('--from=')) from = w.slice('--from='.length);
    else if (w.startsWith('--chown=')) chown = w.slice('--chown='.length);
    else if (w.startsWith('--')) throw new DockerfileError(`line ${line}: COPY flag ${w} is not reproduced by the assembler`);
    else plain.push(w);
  }
  if (plain.length < 2) throw new DockerfileError(`line ${line}: COPY needs a source and a destination`);
  const dest = plain[plain.length - 1] ?? '';
  const sources = plain.slice(0, -1);
  return { from, chown, sources, dest: posixJoin(workdir ?? '/', dest), destIsDir: dest.endsWith('/') || dest === '.' || sources.length > 1, line };
}

function parseEnv(rest: string, line: number): [string, string][] {
  const pairs: [string, string][] = [];
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g;
  for (const m of rest.matchAll(re)) {
    const v = m[2] ?? '';
    pairs.push([m[1] ?? '', v.startsWith('"') ? JSON.parse(v) as string : v]);
  }
  if (pairs.length === 0 || rest.replace(re, '').trim() !== '') {
    throw new DockerfileError(`line ${line}: ENV must be KEY=value pairs: ${rest}`);
  }
  return pairs;
}

interface MutableStage {
  name: string | undefined; base: string; workdir: string | undefined; user: string | undefined;
  env: [string, string][]; expose: string[]; entrypoint: string[] | undefined; copies: CopyStep[]; runs: string[];
}

/** Parses `text`; throws DockerfileError naming the line of anything it cannot reproduce. */
export function parseDockerfile(text: string): Dockerfile {
  const args: Record<string, string> = {};
  const stages: MutableStage[] = [];
  for (const ins of instructions(text)) {
    const cur = stages.at(-1);
    if (ins.op === 'ARG') {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(\S*))?$/.exec(ins.rest);
      if (m?.[1] === undefined || m[2] === undefined) throw new DockerfileError(`line ${ins.line}: ARG needs a default value here: ${ins.rest}`);
      args[m[1]] = m[2];
      continue;
    }
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(substitute(ins.rest, args, ins.line));
      if (m?.[1] === undefined) throw new DockerfileError(`line ${ins.line}: cannot read FROM ${ins.rest}`);
      stages.push({ name: m[2], base: m[1], workdir: undefined, user: undefined, env: [], expose: [], entrypoint: undefined, copies: [], runs: [] });
      continue;
    }
    if (cur === undefined) throw new DockerfileError(`line ${ins.line}: ${ins.op} before the first FROM`);
    const rest = substitute(ins.rest, args, ins.line);
    switch (ins.op) {
      case 'WORKDIR': cur.workdir = posixJoin(cur.workdir ?? '/', rest); break;
      case 'COPY': cur.copies.push(parseCopy(rest, cur.workdir, ins.line)); break;
      case 'USER': cur.user = rest; break;
      case 'ENV': cur.env.push(...parseEnv(rest, ins.line)); break;
      case 'EXPOSE': cur.expose.push(...rest.split(/\s+/).map((p) => (p.includes('/') ? p : `${p}/tcp`))); break;
      case 'ENTRYPOINT': cur.entrypoint = jsonArray(rest, ins.line, 'ENTRYPOINT'); break;
      case 'RUN': cur.runs.push(rest); break;
      default: throw new DockerfileError(`line ${ins.line}: ${ins.op} is not reproduced by the image assembler (test/support/images)`);
    }
  }
  if (stages.length === 0) throw new DockerfileError('no FROM instruction');
  return { args, stages };
}

/** The last stage: what `docker build` produces. */
export function runtimeStage(d: Dockerfile): Stage {
  const s = d.stages.at(-1);
  if (s === undefined) throw new DockerfileError('no stage');
  return s;
}

export function stageNamed(d: Dockerfile, name: string): Stage {
  const s = d.stages.find((x) => x.name === name);
  if (s === undefined) throw new DockerfileError(`no stage named ${name}`);
  return s;
}
