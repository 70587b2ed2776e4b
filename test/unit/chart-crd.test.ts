// One source of truth for the CRD (DESIGN §7): the chart renders
// charts/outprobe/files/crds/ (templates/crds.yaml), which must be byte-for-byte
// the generated crds/ file. Resync after regenerating the CRD:
//   UPDATE_CHART_CRD=1 node --test test/unit/chart-crd.test.ts
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';

const repoCrds = new URL('../../crds/', import.meta.url);
const chartCrds = new URL('../../charts/outprobe/files/crds/', import.meta.url);

void test('charts/outprobe/files/crds is an exact copy of crds/', () => {
  const names = readdirSync(repoCrds).filter((n) => n.endsWith('.yaml')).sort();
  if (process.env['UPDATE_CHART_CRD'] === '1') for (const n of names) copyFileSync(new URL(n, repoCrds), new URL(n, chartCrds));
  assert.deepEqual(readdirSync(chartCrds).sort(), names, 'the chart holds the same CRD files as crds/');
  for (const n of names) {
    const same = readFileSync(new URL(n, repoCrds)).equals(readFileSync(new URL(n, chartCrds)));
    assert.ok(same, `charts/outprobe/files/crds/${n} differs from crds/${n}; run UPDATE_CHART_CRD=1 node --test test/unit/chart-crd.test.ts`);
  }
});
