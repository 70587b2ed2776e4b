// A process that builds a pod network, leaves things in it (a pod, a process in the pod,
// a root-namespace fault table), prints what it made and waits to be SIGKILLed: the
// podnet test proves sweepStale removes exactly that.
import { createPodNet } from '../../support/podnet/index.ts';

const net = await createPodNet({ nodes: 2 });
const pod = await net.attachPod('kwok-node-1', net.nodes[1]!.podCidr.replace(/0\/25$/, '9'));
const sleeper = net.spawnIn(pod.netns, 'sleep', ['600'], { stdio: 'ignore' });
await net.faults.degrade({ to: `${pod.ip}/32`, lossPercent: 50 });
process.stdout.write(`${JSON.stringify({ prefix: net.prefix, slot: net.slot, podNetns: pod.netns, sleeper: sleeper.pid })}\n`);
setInterval(() => undefined, 60_000);
