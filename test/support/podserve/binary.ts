// Finds the podserve binary: OUTPROBE_PODSERVE if set, otherwise the cache of
// scripts/build-podserve.sh, which builds it on first use (a few seconds with a
// warm Go cache) and prints its path. Built once per process.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const script = path.join(import.meta.dirname, '../../../scripts/build-podserve.sh');
let built: Promise<string> | undefined;

export function podserveBinary(): Promise<string> {
  const fromEnv = process.env['OUTPROBE_PODSERVE'];
  if (fromEnv !== undefined && fromEnv !== '') return Promise.resolve(fromEnv);
  built ??= (async () => {
    const { stdout } = await promisify(execFile)('bash', [script], { encoding: 'utf8', timeout: 600_000 });
    const bin = stdout.trim().split('\n').at(-1) ?? '';
    if (bin === '') throw new Error('scripts/build-podserve.sh printed no path');
    return bin;
  })();
  built.catch(() => { built = undefined; });
  return built;
}
