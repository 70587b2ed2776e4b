// Whether this machine can build the pod network, with a one-line reason and what to
// do when it cannot. Checked once per process.
import { spawnSync } from 'node:child_process';

export type Support = { ok: true } | { ok: false; why: string };
let cached: Support | undefined;

function check(): Support {
  const uid = process.getuid?.();
  if (uid !== 0) return { ok: false, why: `the pod network needs root (uid is ${uid ?? 'unknown'}): run as root, or use the loopback plane` };
  const ns = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (ns.error !== undefined) return { ok: false, why: 'no `ip` command: install iproute2 (apt-get install iproute2)' };
  if (ns.status !== 0) return { ok: false, why: `\`ip netns list\` fails (${ns.stderr.trim()}): network namespaces need CAP_SYS_ADMIN and a writable /run/netns` };
  const nft = spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' });
  if (nft.error !== undefined) return { ok: false, why: 'no `nft` command: install nftables (apt-get install nftables)' };
  if (nft.status !== 0) return { ok: false, why: `\`nft list tables\` fails (${nft.stderr.trim()}): the kernel needs nf_tables` };
  return { ok: true };
}

export function podNetSupport(): Support {
  cached ??= check();
  return cached;
}
