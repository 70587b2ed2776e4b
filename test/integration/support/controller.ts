import { Controller, reporter } from '../../../src/controller/index.ts';
import { EventRecorder, Metrics, silentLogger } from '../../../src/observability/index.ts';
import type { Logger } from '../../../src/observability/index.ts';
import type { ControllerEvent, ControllerOptions } from '../../../src/controller/index.ts';
import { systemClock, systemRandom } from '../../../src/kernel/index.ts';
import { KubeClient, fromKubeconfig } from '../../../src/kube/index.ts';
import { createGrpcProber, createHttpProber, tcpProbe } from '../../../src/probing/index.ts';
import { readFileSync } from 'node:fs';
import type { KubeClient as TestKube } from '../../support/cluster/index.ts';

export interface RunningController {
  readonly controller: Controller;
  readonly events: ControllerEvent[];
  /** The real metrics the reporter feeds. */
  readonly metrics: Metrics;
  /** Stops it gracefully (in-flight writes settle). */
  readonly stop: () => Promise<void>;
}

/** The controller in-process against the test control plane, probing only 127.0.0.0/8. */
/**
 * `over.log`: where the controller's log lines go (a harness's logger, so a failure prints its
 * decisions: test/support/replicas); none by default.
 */
export function startController(
  kubeconfigPath: string,
  namespace: string,
  over: { readonly execEnabled?: boolean; readonly log?: Logger; readonly tap?: (e: ControllerEvent) => void; readonly options?: Partial<Pick<ControllerOptions, 'identity' | 'owns' | 'fleet'>> } = {},
): RunningController {
  const client = new KubeClient({ connection: fromKubeconfig(kubeconfigPath), clock: systemClock, random: systemRandom, qps: 200, burst: 400 });
  const events: ControllerEvent[] = [];
  const metrics = new Metrics({ defaultMetrics: false });
  // The real reporter too, so Kubernetes Events and metrics are exercised against the API server.
  const log = over.log ?? silentLogger;
  const recorder = new EventRecorder({ api: client, clock: systemClock, random: systemRandom, logger: log, metrics, reportingInstance: 'test' });
  const report = reporter({ log, metrics, events: recorder });
  const controller = new Controller({
    client,
    clock: systemClock,
    random: systemRandom,
    observe: (e) => {
      events.push(e);
      report(e);
      over.tap?.(e);
    },
    probers: { httpGet: createHttpProber({ userAgent: 'kube-probe/1.37' }), tcpSocket: tcpProbe, grpc: createGrpcProber({ userAgent: 'kube-probe/1.37' }) },
    allowedCidrs: ['127.0.0.0/8'],
    namespaces: [namespace],
    statusIntervalMs: 200,
    ...(over.execEnabled === undefined ? {} : { execEnabled: over.execEnabled }),
    ...over.options,
  });
  const abort = new AbortController();
  const done = controller.run(abort.signal);
  let stopped: Promise<void> | undefined;
  return {
    controller,
    events,
    metrics,
    stop: () =>
      (stopped ??= (async () => {
        abort.abort();
        await done;
        // As src/main.ts does at shutdown: the recorder's summary timer and retries end
        // with the controller, so nothing of it runs (or logs) after the test.
        await recorder.close();
        await client.close();
      })()),
  };
}

const crdPath = new URL('../../../crds/outprobe.io_probepolicies.yaml', import.meta.url);

/** Installs the CRD from crds/ and waits until it is served. */
export async function installCrd(kube: TestKube): Promise<void> {
  const { parse } = await import('yaml');
  const crd = parse(readFileSync(crdPath, 'utf8')) as unknown;
  await kube.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, [409]);
  for (let i = 0; i < 100; i++) {
    const r = await kube.call('GET', '/apis/outprobe.io/v1alpha1/probepolicies');
    if (r.status === 200) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('CRD probepolicies.outprobe.io not served after 10 s');
}
