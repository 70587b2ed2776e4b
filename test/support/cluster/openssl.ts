// Debian's openssl, installed on demand, for the control plane's keys and certificates.
import { execFileSync } from 'node:child_process';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Makes sure `openssl` is on PATH, installing Debian's package when it is missing. */
export function ensureOpenssl(): void {
  if (hasOpenssl()) return;
  process.stderr.write('openssl not found: installing Debian package openssl\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'openssl'], { stdio: 'inherit', env });
  if (!hasOpenssl()) throw new Error('openssl is still missing after apt-get install openssl');
}

/** Runs openssl in `cwd`; throws with its stderr on failure. */
export function openssl(cwd: string, args: readonly string[]): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args.join(' ')} failed: ${stderr}`, { cause: err });
  }
}
