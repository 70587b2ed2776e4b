// `node scripts/check-real-nodes.ts`: whether this machine can run real nodes (a real
// kubelet with containerd, runc and the CNI plugins: docs/adr/0047-real-nodes.md), in
// one line; exit 1 when it cannot. scripts/test.sh runs it so that a CI machine without
// them fails loudly instead of skipping the real-node tier.
import { realNodeSupport } from '../test/support/realnode/index.ts';

const s = realNodeSupport();
if (s.ok) process.stdout.write(`real nodes: supported (containerd, runc, CNI plugins, cgroup ${s.cgroup})\n`);
else {
  process.stdout.write(`real nodes: not supported here: ${s.why}\n`);
  process.exitCode = 1;
}
