/**
 * The differential tier: every scenario of scenarios.ts through the kubelet's
 * own probers (tools/kubelet-diff) and through outprobe's executors. Fails on
 * any difference docs/kubelet-differences.md does not list; listed entries
 * that no longer differ are reported as diagnostics (not failures, so a fix
 * on one branch does not break another; regenerate the listing with
 * `npm run test:differential -- --report`). OUTPROBE_DIFF_STRICT=1 makes
 * stale entries fail too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { check, counts, readListing } from './listing.ts';
import { kubeletDiffBinary, runAll } from './run.ts';
import { scenarios } from './scenarios.ts';

test('outprobe matches the kubelet on every scenario, except the listed differences', { timeout: 600_000 }, async (t) => {
  assert.ok(scenarios.length >= 200, `only ${scenarios.length} scenarios`);
  const results = await runAll(kubeletDiffBinary(), scenarios);
  const { unlisted, stale } = check(results, readListing());
  t.diagnostic(counts(results));
  for (const s of stale) t.diagnostic(`stale entry in docs/kubelet-differences.md: ${s.pattern} no longer differs in ${s.aspect}`);
  const detail = unlisted.map((u) => {
    const r = results.find((x) => x.id === u.id);
    return `${u.id} (${u.aspects.join(', ')}):\n  kubelet  ${JSON.stringify(r?.kubelet)}\n  outprobe ${JSON.stringify(r?.outprobe)}`;
  });
  assert.deepEqual(detail, [], `differences not listed in docs/kubelet-differences.md:\n${detail.join('\n')}`);
  if (process.env['OUTPROBE_DIFF_STRICT'] === '1') assert.deepEqual(stale, []);
});
