// Whether this host can run real nodes (docs/adr/0047-real-nodes.md), with a one-line
// reason when it cannot. scripts/test.sh installs the Debian packages when missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cgroupHierarchies } from '../podnet/host-state.ts';
import { podNetSupport } from '../podnet/index.ts';
import { CNI_BIN_DIR } from './config.ts';

export type RealNodeSupport = { ok: true; cgroup: 'v1' | 'v2' } | { ok: false; why: string };

export function realNodeSupport(): RealNodeSupport {
  const net = podNetSupport();
  if (!net.ok) return { ok: false, why: `real nodes need the pod network: ${net.why}` };
  for (const [cmd, pkg] of [['containerd', 'containerd'], ['ctr', 'containerd'], ['runc', 'runc'], ['nsenter', 'util-linux']] as const) {
    const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
    if (r.status !== 0) return { ok: false, why: `no \`${cmd}\` command: install ${pkg} (apt-get install ${pkg}); scripts/test.sh does this as root` };
  }
  for (const plugin of ['bridge', 'host-local', 'loopback']) {
    if (!existsSync(`${CNI_BIN_DIR}/${plugin}`)) return { ok: false, why: `no CNI plugin ${CNI_BIN_DIR}/${plugin}: install containernetworking-plugins` };
  }
  const h = cgroupHierarchies();
  if (h.length === 0) return { ok: false, why: 'no cgroup hierarchy is mounted under /sys/fs/cgroup' };
  const v1 = h.some((x) => x.endsWith('/memory'));
  return { ok: true, cgroup: v1 ? 'v1' : 'v2' };
}
