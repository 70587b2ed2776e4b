// The chart's alerts and dashboard as the tests read them (docs/adr/0061-alerts.md): the rendered
// PrometheusRule, the metric names every expression reads, promtool built from Go modules
// (scripts/build-promtool.sh), and a check of those names against a replica's /metrics text.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT } from '../cluster/bins.ts';

export const chartDir = path.join(REPO_ROOT, 'charts/outprobe');
export const dashboardPath = path.join(chartDir, 'files/dashboards/outprobe.json');
export const alertTestsPath = path.join(REPO_ROOT, 'test/fixtures/alerts/alerts.test.yaml');

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}
export interface RuleGroups {
  readonly groups: readonly { readonly name: string; readonly rules: readonly AlertRule[] }[];
}

/** OUTPROBE_PROMTOOL if set; otherwise the build script's cached binary (built when missing: minutes when cold). */
let found: string | undefined;
export function findPromtool(): string {
  if (found !== undefined) return found;
  const fromEnv = process.env['OUTPROBE_PROMTOOL'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const out = execFileSync('bash', [path.join(REPO_ROOT, 'scripts/build-promtool.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const bin = out.trim().split('\n').pop() ?? '';
  if (!existsSync(bin)) throw new Error(`promtool missing at '${bin}'`);
  found = bin;
  return bin;
}

/** The PrometheusRule's spec (its groups) from `helm template` with the rule on and `args` added. */
export function renderRules(helm: string, ...args: string[]): RuleGroups {
  const r = spawnSync(helm, ['template', 'outprobe', chartDir, '--namespace', 'outprobe', '--set', 'prometheusRule.enabled=true', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  const rule = parseAllDocuments(r.stdout).map((d) => d.toJS() as { kind?: string; spec?: RuleGroups } | null).find((o) => o?.kind === 'PrometheusRule');
  if (rule?.spec === undefined) throw new Error('no PrometheusRule rendered');
  return rule.spec;
}

export function alertsOf(rules: RuleGroups): AlertRule[] {
  return rules.groups.flatMap((g) => g.rules);
}

/** The PromQL expressions of the dashboard's panels. */
export function dashboardExpressions(): string[] {
  const d = JSON.parse(readFileSync(dashboardPath, 'utf8')) as { panels: { targets?: { expr?: string }[] }[]; templating?: { list: { query?: unknown }[] } };
  const fromPanels = d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  const fromVariables = (d.templating?.list ?? []).map((v) => (typeof v.query === 'string' ? v.query : '')).filter((q) => q.includes('outprobe_'));
  return [...fromPanels, ...fromVariables].filter((e) => e !== '');
}

/** The outprobe metric families an expression reads (`_bucket`, `_sum`, `_count` name their histogram). */
export function metricFamilies(expr: string): string[] {
  const names = expr.match(/\boutprobe_[a-z0-9_]+/g) ?? [];
  return [...new Set(names)].sort();
}

/**
 * Families an expression reads that `exposition` (a /metrics text) does not declare. A family
 * counts as exposed when its `# TYPE` line is there: a labelled series with no sample yet is
 * still declared, and a renamed or removed metric is not.
 */
export function undeclared(families: readonly string[], exposition: string): string[] {
  const types = new Map<string, string>();
  for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
  return families.filter((f) => {
    if (types.has(f)) return false;
    const base = f.replace(/_(bucket|sum|count)$/, '');
    return !(base !== f && (types.get(base) === 'histogram' || types.get(base) === 'summary'));
  });
}

/** The rules without annotations: `promtool test rules` then checks expressions, `for` and labels only. */
export function withoutAnnotations(rules: RuleGroups): RuleGroups {
  const bare = (r: AlertRule): AlertRule => ({ alert: r.alert, expr: r.expr, ...(r.for === undefined ? {} : { for: r.for }), ...(r.labels === undefined ? {} : { labels: r.labels }) });
  return { groups: rules.groups.map((g) => ({ ...g, rules: g.rules.map(bare) })) };
}

export interface PromtoolRun { readonly status: number | null; readonly output: string }

/** Runs promtool `args` in a temp dir holding `files` (name → text); the dir is removed afterwards. */
export function promtoolIn(promtool: string, files: Readonly<Record<string, string>>, ...args: string[]): PromtoolRun {
  const dir = mkdtempSync(path.join(tmpdir(), 'outprobe-promtool-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const r = spawnSync(promtool, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Copies the fixture's unit tests next to `rules` and runs `promtool test rules`. */
export function testRules(promtool: string, rules: RuleGroups, tests = readFileSync(alertTestsPath, 'utf8')): PromtoolRun {
  return promtoolIn(promtool, { 'rules.yaml': stringify(withoutAnnotations(rules)), 'alerts.test.yaml': tests }, 'test', 'rules', 'alerts.test.yaml');
}

/** One sample of a /metrics text: its series (name and labels, as written) and value. */
export interface Sample { readonly series: string; readonly name: string; readonly value: string }

export function samplesOf(exposition: string, families: readonly string[]): Sample[] {
  const wanted = new Set(families);
  const out: Sample[] = [];
  for (const line of exposition.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)/.exec(line);
    if (m === null || !wanted.has(m[1]!)) continue;
    out.push({ series: `${m[1]!}${m[2] ?? ''}`, name: m[1]!, value: m[3]! });
  }
  return out;
}

/**
 * A promtool unit test that holds every scraped sample of `families` at its value for `minutes`
 * (labelled instance=`instance`) and expects `alert` to fire, or not, at the end: the alert
 * evaluated on what a live replica exposes.
 */
export function scrapedAlertTest(o: { readonly samples: readonly Sample[]; readonly instance: string; readonly alert: string; readonly minutes: number; readonly firing: readonly Record<string, string>[] }): string {
  const withInstance = (series: string): string => {
    const brace = series.indexOf('{');
    const name = brace < 0 ? series : series.slice(0, brace);
    const labels = brace < 0 ? '' : series.slice(brace + 1, -1);
    return `${name}{${[`instance="${o.instance}"`, labels].filter((l) => l !== '').join(',')}}`;
  };
  return stringify({
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [{
      interval: '1m',
      input_series: o.samples.map((s) => ({ series: withInstance(s.series), values: `${s.value}+0x${o.minutes}` })),
      alert_rule_test: [{ eval_time: `${o.minutes}m`, alertname: o.alert, exp_alerts: o.firing.map((labels) => ({ exp_labels: labels })) }],
    }],
  });
}

