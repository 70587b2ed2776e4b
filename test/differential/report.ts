/**
 * `npm run test:differential -- --report` (or `node test/differential/report.ts`):
 * runs the tier and prints the current differences in the format of
 * docs/kubelet-differences.md (reasons carried over from the listing), then
 * the stale entries and the counts. `--details` adds both sides of each
 * differing scenario (result, message, request heads) as JSON lines.
 * `--only <prefix>` runs the scenarios whose id starts with the prefix.
 */
import { check, counts, readListing, reportRows } from './listing.ts';
import { kubeletDiffBinary, runAll } from './run.ts';
import { scenarios } from './scenarios.ts';

const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '') : '';
const list = scenarios.filter((s) => s.id.startsWith(only));
const results = await runAll(kubeletDiffBinary(), list);
const entries = readListing();
console.log(reportRows(results, entries).join('\n'));
const { unlisted, stale } = check(results, entries);
console.log(`\n${counts(results)}; ${unlisted.length} unlisted`);
if (only === '') for (const s of stale) console.log(`stale entry: ${s.pattern} no longer differs in ${s.aspect}`);
if (args.includes('--details')) for (const r of results) if (r.differs.length > 0) console.log(JSON.stringify(r));
