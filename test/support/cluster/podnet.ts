// Each running control plane on the machine claims its own loopback pod network
// 127.<X>.0.0/16 (X in 2..254), so planes started concurrently (parallel suites,
// two developers, CI next to a demo) never hand out the same pod IP. A claim is a
// file in ${OUTPROBE_PODNET_DIR:-/tmp/outprobe-podnet} named X holding the PID that
// keeps the plane alive (etcd once it runs); a claim whose PID is gone is stale.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive } from './proc.ts';

export interface PodNetwork {
  /** Second octet X of 127.X.0.0/16. */
  readonly octet: number;
  /** Pod CIDR of fake node i: 127.X.i.0/24. */
  readonly nodeCidr: (i: number) => string;
  /** kwok's fallback CIDR (unused while nodes carry their own). */
  readonly fallbackCidr: string;
  /** Records the PID that now keeps the claim alive. */
  readonly setOwner: (pid: number) => void;
  readonly release: () => void;
}

const DIR = process.env['OUTPROBE_PODNET_DIR'] ?? '/tmp/outprobe-podnet';
const FIRST = 2; // 127.0.x holds the control plane's 127.0.0.1; 127.1.x is left to older helpers
const LAST = 254;

function tryClaim(file: string): boolean {
  try {
    const fd = openSync(file, 'wx');
    writeFileSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const owner = Number(readFileSync(file, 'utf8'));
  if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) return false;
  rmSync(file, { force: true }); // stale: its plane is gone
  return tryClaim(file);
}

export function claimPodNetwork(): PodNetwork {
  mkdirSync(DIR, { recursive: true });
  const span = LAST - FIRST + 1;
  const start = Math.floor(Math.random() * span);
  for (let k = 0; k < span; k++) {
    const octet = FIRST + ((start + k) % span);
    const file = path.join(DIR, String(octet));
    if (!tryClaim(file)) continue;
    return {
      octet,
      nodeCidr: (i) => `127.${octet}.${i}.0/24`,
      fallbackCidr: `127.${octet}.255.0/24`,
      setOwner: (pid) => { writeFileSync(file, String(pid)); },
      release: () => { rmSync(file, { force: true }); },
    };
  }
  throw new Error(`no free loopback pod network: all of 127.${FIRST}-${LAST}.0.0/16 are claimed in ${DIR}`);
}
