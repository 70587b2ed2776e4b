// The plane's real nodes (docs/adr/0047-real-nodes.md): the kubelet binary and the
// images are made ready before the plane starts (minutes when cold), then each real node
// of the pod network starts its containerd and kubelet, in parallel, once the API server
// and the controllers run.
import path from 'node:path';
import type { PodNet } from '../podnet/index.ts';
import { buildNodeImages, type NodeImages } from '../images/index.ts';
import { kubeletBinary, restoreTunables, snapshotTunables, startRealNode, type RealNode } from '../realnode/index.ts';
import { NODE_BRIDGE } from '../podnet/index.ts';
import type { Pki } from './certs.ts';
import { nodeClientCert } from './certs.ts';
import type { KubeClient } from './kube.ts';
import { loadCredentials, writeKubeconfig } from './kubeconfig.ts';
import { nodesReady } from './nodes.ts';
import type { Component } from './proc.ts';

export interface RealNodeParts {
  readonly kubelet: string;
  readonly images: NodeImages;
}

export async function prepareRealNodes(log: (m: string) => void): Promise<RealNodeParts> {
  const t0 = Date.now();
  const [kubelet, images] = await Promise.all([kubeletBinary(), buildNodeImages(log)]);
  log(`real nodes: kubelet ${kubelet}, images ${images.pause.name} ${images.podserve.name} ${images.outprobe.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return { kubelet, images };
}

export interface StartRealNodesOptions {
  readonly net: PodNet;
  readonly kube: KubeClient;
  readonly pki: Pki;
  readonly server: string;
  readonly dir: string;
  readonly start: (name: string, bin: string, args: string[]) => Component;
  readonly log: (m: string) => void;
  readonly parts: RealNodeParts;
}

export async function startRealNodes(o: StartRealNodesOptions): Promise<RealNode[]> {
  const { images } = o.parts;
  const deps = {
    net: o.net, planeDir: o.dir, kubelet: o.parts.kubelet, clientCaFile: o.pki.clientCa,
    images: [images.pause, images.podserve, images.outprobe], pauseImage: images.pause.name, start: o.start, log: o.log,
    nodeKubeconfig: (name: string, file: string): void => {
      const cert = nodeClientCert(o.pki, name);
      writeKubeconfig(file, loadCredentials(o.server, o.pki.servingCa, cert.cert, cert.key));
    },
    nodeReady: (name: string) => nodesReady(o.kube, [name]).catch(() => false),
  };
  const real = o.net.nodes.filter((n) => n.kind === 'real');
  const tunables = snapshotTunables();
  // Every node settles (Ready or failed) before the host's tunables are put back: each kubelet sets them before it reports Ready.
  const settled = await Promise.allSettled(real.map((n) => startRealNode(n, deps, NODE_BRIDGE)));
  const restored = restoreTunables(tunables);
  if (restored.length > 0) o.log(`real nodes: restored the host's kernel tunables the kubelets changed: ${restored.join(', ')}`);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const nodes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  o.log(`real nodes ${nodes.map((r) => `${r.node.name} (${r.node.ip}, ${path.basename(r.spec.dir)})`).join(', ')} Ready`);
  return nodes;
}
