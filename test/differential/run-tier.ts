/**
 * `npm run test:differential`: runs the differential tier with node's test
 * runner (its "ℹ pass N" / "ℹ fail N" lines are what scripts/test.sh counts).
 * `npm run test:differential -- --report [--details] [--only <prefix>]`
 * prints the current differences in docs/kubelet-differences.md's format instead.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const here = (f: string): string => fileURLToPath(new URL(f, import.meta.url));
const argv = args.includes('--report') ? [here('report.ts'), ...args.filter((a) => a !== '--report')] : ['--test', '--test-concurrency=1', here('differential.test.ts')];
const r = spawnSync(process.execPath, argv, { stdio: 'inherit' });
process.exit(r.status ?? 1);
