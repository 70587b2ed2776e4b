// Locates the built binaries (scripts/build-cluster-bins.sh), building them if needed.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Binaries {
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kubectl: string;
  readonly kubeProxy: string;
  readonly kwok: string;
  readonly helm: string;
}

function binariesIn(dir: string): Binaries {
  const b = (n: string): string => path.join(dir, n);
  return {
    dir, etcd: b('etcd'), kubeApiserver: b('kube-apiserver'), kubeControllerManager: b('kube-controller-manager'),
    kubeScheduler: b('kube-scheduler'), kubectl: b('kubectl'), kubeProxy: b('kube-proxy'), kwok: b('kwok'), helm: b('helm'),
  };
}

/**
 * OUTPROBE_BIN_DIR if set; otherwise the cache directory of the build script, which
 * builds (minutes when cold, about a second when cached) and prints it.
 */
export function findBinaries(): Binaries {
  const fromEnv = process.env['OUTPROBE_BIN_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return binariesIn(fromEnv);
  const script = path.join(REPO_ROOT, 'scripts/build-cluster-bins.sh');
  const out = execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = out.trim().split('\n').pop() ?? '';
  if (!existsSync(path.join(dir, '.stamp'))) throw new Error(`cluster binaries missing in '${dir}'`);
  return binariesIn(dir);
}
