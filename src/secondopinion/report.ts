import { probeKindTitle } from '../kernel/index.ts';
import type { EventRecorder, Logger, Metrics } from '../observability/index.ts';
import type { SecondOpinionEvent } from './guard.ts';

/**
 * Metrics, logs and the `SecondOpinionDisagreed` Warning Event on the pod
 * (both views; probe outputs only, never a header or token).
 */
export function secondOpinionReporter(sinks: { readonly log: Logger; readonly metrics: Metrics; readonly events: EventRecorder; readonly identity: string }): (e: SecondOpinionEvent) => void {
  const { log, metrics, events, identity } = sinks;
  return (e) => {
    const q = e.question;
    if (e.result === 'fallback') {
      metrics.peer.recordSecondOpinionFallback('gate_false');
      const seconds = Math.round(e.unavailableForMs / 1000);
      log.warn('second opinion unavailable past the bound: writing the readiness False on this replica\'s own verdict (remediation stays held)', { policy: q.policy, pod: `${q.pod.namespace}/${q.pod.name}`, kind: q.probe, unavailableSeconds: seconds });
      events.record(
        { kind: 'Pod', apiVersion: 'v1', namespace: q.pod.namespace, name: q.pod.name, uid: q.pod.uid },
        'Warning',
        'SecondOpinionUnavailable',
        `${probeKindTitle(q.probe)} probe failed from replica ${identity} (${q.ownView || 'failure'}) and no other replica could give a second opinion for ${seconds}s: the readiness gate is written False on this replica's own verdict (within the panic threshold); no remediation is done without a second opinion`,
      );
      return;
    }
    metrics.recordSecondOpinion(e.result, e.durationMs / 1000);
    if (e.result === 'error' && e.errorReason !== undefined) metrics.peer.recordSecondOpinionError(e.errorReason);
    const fields = { policy: q.policy, pod: `${q.pod.namespace}/${q.pod.name}`, kind: q.probe, peer: e.peer, result: e.result, seconds: e.durationMs / 1000 };
    if (e.result === 'agreed') {
      log.info('second opinion agreed: acting on the failure', fields);
      return;
    }
    if (e.result === 'error') {
      log.warn('second opinion not available: holding the action, asking again', { ...fields, error: e.error ?? '' });
      return;
    }
    log.warn('second opinion disagreed: nothing written, the failure is held', { ...fields, peerSaw: e.answer?.message ?? '' });
    const title = probeKindTitle(q.probe);
    events.record(
      { kind: 'Pod', apiVersion: 'v1', namespace: q.pod.namespace, name: q.pod.name, uid: q.pod.uid },
      'Warning',
      'SecondOpinionDisagreed',
      `${title} probe failed from replica ${identity} (${q.ownView || 'failure'}) but succeeded from replica ${e.peer} (${e.answer?.message || 'success'}): outprobe holds the action and asks again after the next failing probe`,
    );
  };
}
