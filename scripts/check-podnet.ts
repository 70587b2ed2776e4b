// `node scripts/check-podnet.ts`: whether this machine can build the pod network
// (ADR 0014), in one line; exit 1 when it cannot. scripts/test.sh runs it so that a
// CI machine without it fails loudly instead of skipping the network tests.
import { podNetSupport } from '../test/support/podnet/index.ts';

const s = podNetSupport();
if (s.ok) process.stdout.write('pod network: supported (root, ip netns, nftables)\n');
else {
  process.stdout.write(`pod network: not supported here: ${s.why}\n`);
  process.exitCode = 1;
}
