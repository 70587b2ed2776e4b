// The chart's alerts and dashboard (issue 30 item 2, docs/adr/0061-alerts.md), checked by promtool
// built from Go modules (scripts/build-promtool.sh): `promtool check rules` on the rendered
// PrometheusRule, `promtool test rules` with series that make each alert fire and not fire
// (test/fixtures/alerts/alerts.test.yaml), the dashboard's expressions parsed as recording rules,
// every metric they read declared by the controller's registry, every runbook a troubleshooting
// section. The same names are checked against a live replica's /metrics in test/e2e/self-partition.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { Metrics } from '../../src/observability/index.ts';
import { REPO_ROOT, findBinaries } from '../support/cluster/bins.ts';
import {
  alertTestsPath, alertsOf, dashboardExpressions, findPromtool, metricFamilies, promtoolIn, renderRules, testRules, undeclared,
} from '../support/alerts/index.ts';
import { headings } from '../unit/docs/markdown.ts';

const wanted = [
  'OutprobeUnownedPods', 'OutprobeReplicaImpaired', 'OutprobeReadinessPanic', 'OutprobeRemediationHalted',
  'OutprobeSecondOpinionErrors', 'OutprobeGateWriteDelay', 'OutprobeEventsDropped', 'OutprobeWatchRestarts',
  'OutprobeServingCertificateExpiry',
];

void describe('chart alerts and dashboard under promtool', () => {
  const helm = findBinaries().helm;
  const t0 = Date.now();
  const promtool = findPromtool();
  process.stderr.write(`# promtool at ${promtool} (${Date.now() - t0} ms to find or build)\n`);
  const rules = renderRules(helm);

  it('renders the nine alerts, each with a severity and a runbook_url', () => {
    assert.deepEqual(alertsOf(rules).map((r) => r.alert), wanted);
    for (const r of alertsOf(rules)) {
      assert.ok(r.labels?.['severity'], `${r.alert} severity`);
      assert.equal(r.annotations?.['runbook_url'], `https://github.com/outprobe/outprobe/blob/main/docs/troubleshooting.md#${r.alert.toLowerCase()}`);
    }
  });

  it('promtool check rules passes on the default render and with a selector and every threshold changed', () => {
    const check = (text: string): string => {
      const r = promtoolIn(promtool, { 'rules.yaml': text }, 'check', 'rules', 'rules.yaml');
      assert.equal(r.status, 0, r.output);
      return r.output;
    };
    assert.match(check(stringify(rules)), /SUCCESS: 9 rules found/);
    const tuned = renderRules(helm, '--set', 'prometheusRule.selector=job="outprobe"\\,namespace="outprobe"',
      '--set', 'prometheusRule.alerts.gateWriteDelay.quantile=0.9', '--set-json', 'prometheusRule.alerts.gateWriteDelay.threshold=2.5',
      '--set', 'prometheusRule.alerts.watchRestarts.window=1h', '--set', 'prometheusRule.alerts.servingCertificateExpiry.thresholdDays=3', '--set', 'prometheusRule.alerts.readinessPanic.enabled=false',
      '--set', 'prometheusRule.additionalLabels.team=platform');
    assert.match(check(stringify(tuned)), /SUCCESS: 8 rules found/);
    const byName = new Map(alertsOf(tuned).map((r) => [r.alert, r]));
    assert.equal(byName.has('OutprobeReadinessPanic'), false, 'a disabled alert is not rendered');
    assert.match(byName.get('OutprobeGateWriteDelay')!.expr, /^histogram_quantile\(0\.9, .*\{job="outprobe",namespace="outprobe",status="False"\}.*\) > 2\.5$/);
    assert.match(byName.get('OutprobeWatchRestarts')!.expr, /\[1h\]/);
    assert.equal(byName.get('OutprobeServingCertificateExpiry')!.expr, '(outprobe_serving_certificate_expiry_timestamp_seconds{job="outprobe",namespace="outprobe"} - time()) < 259200');
    assert.equal(byName.get('OutprobeUnownedPods')!.expr, 'outprobe_unowned_pods{job="outprobe",namespace="outprobe"} > 0');
    assert.equal(byName.get('OutprobeUnownedPods')!.labels?.['team'], 'platform');
  });

  it('promtool test rules: each alert fires on its condition after its `for`, and a healthy fleet raises none', () => {
    const tests = readFileSync(alertTestsPath, 'utf8');
    for (const alert of wanted) assert.ok((tests.match(new RegExp(`alertname: ${alert}\\b`, 'g')) ?? []).length >= 2, `${alert} is tested firing and not firing`);
    const r = testRules(promtool, rules);
    assert.equal(r.status, 0, r.output);
    assert.match(r.output, /SUCCESS/);
    // The tests fail on rules that never fire: a threshold no series reaches.
    const never = renderRules(helm, '--set', 'prometheusRule.alerts.unownedPods.threshold=1000');
    const broken = testRules(promtool, never);
    assert.notEqual(broken.status, 0);
    assert.match(broken.output, /OutprobeUnownedPods/);
  });

  it('the dashboard\'s expressions parse (checked as recording rules by promtool)', () => {
    const exprs = dashboardExpressions().filter((e) => !e.startsWith('label_values('));
    assert.ok(exprs.length >= 15, `${exprs.length} expressions`);
    const asRules = { groups: [{ name: 'dashboard', rules: exprs.map((e, i) => ({ record: `outprobe:dashboard_${i}`, expr: e.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.+') })) }] };
    const r = promtoolIn(promtool, { 'dashboard.yaml': stringify(asRules) }, 'check', 'rules', 'dashboard.yaml');
    assert.equal(r.status, 0, r.output);
  });

  it('every metric an alert or a dashboard panel reads is declared by the controller\'s registry', async () => {
    const families = [...new Set([...alertsOf(rules).map((r) => r.expr), ...dashboardExpressions()].flatMap(metricFamilies))].sort();
    assert.ok(families.includes('outprobe_remediation_halted') && families.includes('outprobe_watch_restarts_total'));
    assert.deepEqual(undeclared(families, await new Metrics({ defaultMetrics: false }).text()), []);
    // The check itself: a renamed family is reported.
    assert.deepEqual(undeclared(['outprobe_unowned_pod', 'outprobe_gate_write_delay_seconds_bucket'], await new Metrics({ defaultMetrics: false }).text()), ['outprobe_unowned_pod']);
  });

  it('every runbook_url anchor is a section of docs/troubleshooting.md', () => {
    const anchors = new Set(headings(readFileSync(path.join(REPO_ROOT, 'docs/troubleshooting.md'), 'utf8')).map((h) => h.anchor));
    const missing = alertsOf(rules).map((r) => r.annotations?.['runbook_url']?.split('#')[1] ?? '').filter((a) => !anchors.has(a));
    assert.deepEqual(missing, []);
  });
});
