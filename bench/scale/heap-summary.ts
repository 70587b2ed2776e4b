// `node --max-old-space-size=8192 bench/scale/heap-summary.ts FILE.heapsnapshot [--pods N] [--depth 14] [--min-mb 0.5]`
// Where a V8 heap snapshot's bytes are (issue 17): self size by type and
// constructor, and the dominator tree (retained sizes) from the root down,
// siblings of one constructor grouped ("20000 x Target, retained 41 MB") with
// one sample of each group opened further. With --pods, sizes are also given
// per pod. Weak and shortcut edges do not retain (as in DevTools).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { who: { type: 'string' }, pods: { type: 'string' }, depth: { type: 'string', default: '14' }, 'min-mb': { type: 'string', default: '0.5' }, top: { type: 'string', default: '40' } },
});
const file = positionals[0];
if (file === undefined) throw new Error('usage: heap-summary.ts FILE.heapsnapshot [--pods N]');
const pods = values.pods === undefined ? undefined : Number(values.pods);
const maxDepth = Number(values.depth);
const minBytes = Number(values['min-mb']) * 1048576;

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { meta } = snap.snapshot;
const nf = meta.node_fields.length;
const ef = meta.edge_fields.length;
const nType = meta.node_fields.indexOf('type');
const nName = meta.node_fields.indexOf('name');
const nSelf = meta.node_fields.indexOf('self_size');
const nEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const weak = edgeTypes.indexOf('weak');
const shortcut = edgeTypes.indexOf('shortcut');
const elementEdge = edgeTypes.indexOf('element');
const hiddenEdge = edgeTypes.indexOf('hidden');
const N = snap.nodes.length / nf;
const nodes = Int32Array.from(snap.nodes);
const edges = Int32Array.from(snap.edges);
const strings = snap.strings;

// First edge of each node.
const firstEdge = new Int32Array(N + 1);
for (let i = 0, e = 0; i < N; i++) {
  firstEdge[i] = e;
  e += (nodes[i * nf + nEdges] ?? 0) * ef;
}
firstEdge[N] = edges.length;

const typeOf = (i: number): string => nodeTypes[nodes[i * nf + nType] ?? 0] ?? '?';
const nameOf = (i: number): string => strings[nodes[i * nf + nName] ?? 0] ?? '';
const selfOf = (i: number): number => nodes[i * nf + nSelf] ?? 0;
/** A grouping label: constructor for objects, the kind for strings, arrays and code. */
function labelOf(i: number): string {
  const t = typeOf(i);
  if (t === 'object') return nameOf(i);
  if (t === 'closure') return `closure ${nameOf(i) || '(anonymous)'}`;
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return '(string)';
  if (t === 'array') return `(array ${nameOf(i)})`;
  if (t === 'hidden' || t === 'native' || t === 'synthetic') return `(${t} ${nameOf(i).slice(0, 40)})`;
  return `(${t})`;
}
const edgeLabel = (e: number): string => {
  const t = edges[e + eType] ?? 0;
  const n = edges[e + eName] ?? 0;
  return t === elementEdge || t === hiddenEdge ? `[${n}]` : (strings[n] ?? '?');
};
const retains = (e: number): boolean => {
  const t = edges[e + eType];
  return t !== weak && t !== shortcut;
};

// Self sizes by type and label.
const total = { bytes: 0 };
const byLabel = new Map<string, { count: number; bytes: number }>();
for (let i = 0; i < N; i++) {
  const s = selfOf(i);
  total.bytes += s;
  const l = labelOf(i);
  const g = byLabel.get(l) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += s;
  byLabel.set(l, g);
}

// Dominators (Cooper, Harvey, Kennedy) over a DFS post-order from the root (node 0).
const post = new Int32Array(N).fill(-1); // node → post-order number
const order = new Int32Array(N); // post-order number → node
let reachable = 0;
{
  let count = 0;
  const stack = new Int32Array(N);
  const cursor = new Int32Array(N);
  const seen = new Uint8Array(N);
  let sp = 0;
  stack[sp++] = 0;
  seen[0] = 1;
  cursor[0] = firstEdge[0] ?? 0;
  while (sp > 0) {
    const v = stack[sp - 1] ?? 0;
    const end = firstEdge[v + 1] ?? 0;
    let pushed = false;
    while ((cursor[v] ?? 0) < end) {
      const e = cursor[v] ?? 0;
      cursor[v] = e + ef;
      if (!retains(e)) continue;
      const w = (edges[e + eTo] ?? 0) / nf;
      if (seen[w] === 1) continue;
      seen[w] = 1;
      cursor[w] = firstEdge[w] ?? 0;
      stack[sp++] = w;
      pushed = true;
      break;
    }
    if (!pushed) {
      sp--;
      post[v] = count;
      order[count++] = v;
    }
  }
  reachable = count;
}
// Predecessors (retaining edges between reachable nodes), in CSR form.
const predCount = new Int32Array(N + 1);
for (let v = 0; v < N; v++) {
  if ((post[v] ?? -1) < 0) continue;
  for (let e = firstEdge[v] ?? 0; e < (firstEdge[v + 1] ?? 0); e += ef) if (retains(e)) predCount[(edges[e + eTo] ?? 0) / nf + 1]!++;
}
for (let v = 0; v < N; v++) predCount[v + 1]! += predCount[v] ?? 0;
const preds = new Int32Array(predCount[N] ?? 0);
{
  const fill = predCount.slice(0, N);
  for (let v = 0; v < N; v++) {
    if ((post[v] ?? -1) < 0) continue;
    for (let e = firstEdge[v] ?? 0; e < (firstEdge[v + 1] ?? 0); e += ef) {
      if (!retains(e)) continue;
      const w = (edges[e + eTo] ?? 0) / nf;
      preds[fill[w]!++] = v;
    }
  }
}
const idom = new Int32Array(N).fill(-1); // by post-order number
/** The nearest common dominator of two post-order numbers. */
function intersect(a: number, b: number): number {
  let p = a;
  let q = b;
  while (p !== q) {
    while (p < q) p = idom[p] ?? 0;
    while (q < p) q = idom[q] ?? 0;
  }
  return p;
}
const rootPo = post[0] ?? 0;
idom[rootPo] = rootPo;
for (let changed = true; changed; ) {
  changed = false;
  for (let po = reachable - 2; po >= 0; po--) {
    const v = order[po] ?? 0;
    let d = -1;
    for (let k = predCount[v] ?? 0; k < (predCount[v + 1] ?? 0); k++) {
      const p = post[preds[k] ?? 0] ?? -1;
      if (p < 0 || (idom[p] ?? -1) < 0) continue;
      d = d < 0 ? p : intersect(p, d);
    }
    if (d >= 0 && idom[po] !== d) {
      idom[po] = d;
      changed = true;
    }
  }
}
// Retained sizes: children before parents in post-order.
const retained = new Float64Array(N);
for (let po = 0; po < reachable; po++) {
  const v = order[po] ?? 0;
  retained[v] = (retained[v] ?? 0) + selfOf(v);
  if (po !== rootPo) {
    const d = order[idom[po] ?? 0] ?? 0;
    retained[d] = (retained[d] ?? 0) + (retained[v] ?? 0);
  }
}
// Dominator-tree children of each node.
const kids = new Map<number, number[]>();
for (let po = 0; po < reachable; po++) {
  if (po === rootPo) continue;
  const d = order[idom[po] ?? 0] ?? 0;
  const list = kids.get(d) ?? [];
  list.push(order[po] ?? 0);
  kids.set(d, list);
}
/** The name of an edge from `from` to `to`, if there is one. */
function via(from: number, to: number): string {
  for (let e = firstEdge[from] ?? 0; e < (firstEdge[from + 1] ?? 0); e += ef) if ((edges[e + eTo] ?? 0) / nf === to) return edgeLabel(e);
  return '~';
}

const MB = (b: number): string => `${(b / 1048576).toFixed(2)} MB`;
const perPod = (b: number): string => (pods === undefined ? '' : ` (${Math.round(b / pods)} B/pod)`);
const out: string[] = [];
out.push(`${file}: ${N} nodes, ${reachable} reachable, self total ${MB(total.bytes)}${perPod(total.bytes)}`);
out.push('', `## Self size by type/constructor (top ${values.top})`);
for (const [l, g] of [...byLabel].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(values.top))) {
  out.push(`${MB(g.bytes).padStart(11)} ${String(g.count).padStart(9)}  ${l}${perPod(g.bytes)}`);
}
// Strings by shape (digits as #, cut to 48 characters): which repeated texts take room.
const stringTypes = new Set(['string', 'concatenated string', 'sliced string']);
const byShape = new Map<string, { count: number; bytes: number }>();
for (let i = 0; i < N; i++) {
  if (!stringTypes.has(typeOf(i))) continue;
  const shape = `${typeOf(i) === 'string' ? '' : `(${typeOf(i)}) `}${nameOf(i).slice(0, 48).replace(/[0-9]+/g, '#').replace(/\n/g, ' ')}`;
  const g = byShape.get(shape) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += selfOf(i);
  byShape.set(shape, g);
}
out.push('', `## Strings by shape (top ${values.top})`);
for (const [l, g] of [...byShape].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(values.top))) {
  out.push(`${MB(g.bytes).padStart(11)} ${String(g.count).padStart(9)}  ${JSON.stringify(l)}${perPod(g.bytes)}`);
}
// Plain objects by their property names: which record shapes are numerous.
const propertyEdge = edgeTypes.indexOf('property');
const byKeys = new Map<string, { count: number; bytes: number }>();
for (let i = 0; i < N; i++) {
  if (typeOf(i) !== 'object' || nameOf(i) !== 'Object') continue;
  const keys: string[] = [];
  for (let e = firstEdge[i] ?? 0; e < (firstEdge[i + 1] ?? 0) && keys.length < 7; e += ef) if (edges[e + eType] === propertyEdge) keys.push(edgeLabel(e));
  const l = `{${keys.join(',')}}`;
  const g = byKeys.get(l) ?? { count: 0, bytes: 0 };
  g.count++;
  // Its own size and its out-of-object property array.
  let bytes = selfOf(i);
  for (let e = firstEdge[i] ?? 0; e < (firstEdge[i + 1] ?? 0); e += ef) if (edgeLabel(e) === 'properties') bytes += selfOf((edges[e + eTo] ?? 0) / nf);
  g.bytes += bytes;
  byKeys.set(l, g);
}
out.push('', `## Plain objects by property names (self + property array; top ${values.top})`);
for (const [l, g] of [...byKeys].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(values.top))) {
  out.push(`${MB(g.bytes).padStart(11)} ${String(g.count).padStart(9)}  ${l.slice(0, 150)}${perPod(g.bytes)}`);
}
// The largest single retainers below the roots, with their dominator chain.
const chain = (v: number): string => {
  const parts: string[] = [];
  for (let x = v, k = 0; x !== 0 && k < 8; k++) {
    const d = order[idom[post[x] ?? 0] ?? 0] ?? 0;
    parts.push(`${via(d, x)}:${labelOf(x).slice(0, 40)}`);
    x = d;
  }
  return parts.reverse().join(' / ');
};
const top = [...Array(N).keys()].filter((i) => (retained[i] ?? 0) >= minBytes && typeOf(i) !== 'synthetic').sort((a, b) => (retained[b] ?? 0) - (retained[a] ?? 0)).slice(0, Number(values.top) * 2);
out.push('', `## Largest retainers (retained ≥ ${MB(minBytes)}), with their dominator chain`);
for (const i of top) out.push(`${MB(retained[i] ?? 0).padStart(11)}${perPod(retained[i] ?? 0)}  ${chain(i)}`);
// --who TEXT: what refers to the nodes whose name starts with TEXT (strings, constructors), for the first few of them.
if (values.who !== undefined) {
  const who = values.who;
  const hits = new Set<number>();
  for (let i = 0; i < N && hits.size < 6; i++) if (nameOf(i).startsWith(who)) hits.add(i);
  out.push('', `## Who refers to ${JSON.stringify(who)} (first ${hits.size})`);
  for (let v = 0; v < N; v++) {
    for (let e = firstEdge[v] ?? 0; e < (firstEdge[v + 1] ?? 0); e += ef) {
      const w = (edges[e + eTo] ?? 0) / nf;
      if (hits.has(w)) out.push(`${nameOf(w).slice(0, 40)} (#${w}) ← ${edgeLabel(e)} of ${labelOf(v).slice(0, 50)} ← ${chain(v).slice(-160)}`);
    }
  }
}
out.push('', `## Dominator tree (retained ≥ ${MB(minBytes)}; siblings grouped by constructor, one sample opened)`);
function walk(v: number, depth: number, indent: string, threshold: number): void {
  if (depth > maxDepth) return;
  const groups = new Map<string, { count: number; bytes: number; sample: number; edge: string }>();
  for (const c of kids.get(v) ?? []) {
    const l = labelOf(c);
    const g = groups.get(l) ?? { count: 0, bytes: 0, sample: c, edge: '' };
    g.count++;
    g.bytes += retained[c] ?? 0;
    if ((retained[c] ?? 0) > (retained[g.sample] ?? 0)) g.sample = c;
    groups.set(l, g);
  }
  for (const [l, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes)) {
    if (g.bytes < threshold) break;
    const edge = via(v, g.sample);
    const s = retained[g.sample] ?? 0;
    out.push(`${indent}${g.count > 1 ? `${g.count} x ` : ''}${edge} → ${l}: ${MB(g.bytes)}${perPod(g.bytes)}${g.count > 1 ? `, largest ${s} B` : ` (self ${selfOf(g.sample)} B)`}`);
    // Inside one sample of many, show what it is made of down to a few percent of it.
    walk(g.sample, depth + 1, `${indent}  `, g.count > 1 ? Math.max(64, s * 0.03) : threshold);
  }
}
walk(0, 0, '', minBytes);
process.stdout.write(`${out.join('\n')}\n`);
