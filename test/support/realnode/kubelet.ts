// Finds the kubelet: OUTPROBE_KUBELET if set, otherwise the cache of
// scripts/build-kubelet.sh, which builds it on first use (minutes cold, a second cached).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const script = path.join(import.meta.dirname, '../../../scripts/build-kubelet.sh');
let built: Promise<string> | undefined;

export function kubeletBinary(): Promise<string> {
  const fromEnv = process.env['OUTPROBE_KUBELET'];
  if (fromEnv !== undefined && fromEnv !== '') return Promise.resolve(fromEnv);
  built ??= (async () => {
    const { stdout } = await promisify(execFile)('bash', [script], { encoding: 'utf8', timeout: 3_600_000, maxBuffer: 16 << 20 });
    const bin = stdout.trim().split('\n').at(-1) ?? '';
    if (bin === '') throw new Error('scripts/build-kubelet.sh printed no path');
    return bin;
  })();
  built.catch(() => { built = undefined; });
  return built;
}
