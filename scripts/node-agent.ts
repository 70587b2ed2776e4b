// `node scripts/node-agent.ts --kubeconfig <path> --node <name> [--log-level debug|info]`:
// one node agent (test/support/node-agent) for one node, run inside the node's network
// namespace so the containers' probes leave from the node. Logs JSON lines to stdout;
// SIGTERM/SIGINT stop it.
import { parseArgs } from 'node:util';
import { systemClock, systemRandom } from '../src/kernel/index.ts';
import { fromKubeconfig, KubeClient } from '../src/kube/index.ts';
import { createRunProbe, NodeAgent } from '../test/support/node-agent/index.ts';
import type { LogEntry } from '../test/support/node-agent/index.ts';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string' }, node: { type: 'string' }, 'log-level': { type: 'string', default: 'info' } },
});
const kubeconfig = values.kubeconfig;
const node = values.node;
if (kubeconfig === undefined || node === undefined) {
  process.stderr.write('usage: node scripts/node-agent.ts --kubeconfig <path> --node <node name> [--log-level debug|info]\n');
  process.exit(2);
}
const debug = values['log-level'] === 'debug';
// 'probe result' lines are per probe transition; everything else is a write or a problem.
const log = (e: LogEntry): void => {
  if (!debug && e.msg === 'probe result' && e['cause'] !== 'probe') return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), node, ...e })}\n`);
};
const client = new KubeClient({ connection: fromKubeconfig(kubeconfig), clock: systemClock, random: systemRandom, userAgent: `outprobe-node-agent/${node}`, qps: 200, burst: 400 });
const agent = new NodeAgent({ client, nodeName: node, clock: systemClock, random: systemRandom, runProbe: createRunProbe(systemRandom), log });
const stop = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => { stop.abort(); });
await agent.run(stop.signal);
await client.close();
log({ msg: 'node agent stopped' });
