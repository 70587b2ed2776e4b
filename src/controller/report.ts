import { probeKindTitle } from '../kernel/index.ts';
import { panicMessage } from '../panic/index.ts';
import { panicExitMarginPercent } from '../policy/index.ts';
import type { EventFold, EventRecorder, EventType, InvolvedObject, Logger, Metrics } from '../observability/index.ts';
import type { ControllerEvent, PolicyRef } from './events.ts';

const podObject = (p: { readonly namespace: string; readonly name: string; readonly uid: string }): InvolvedObject => ({ kind: 'Pod', apiVersion: 'v1', namespace: p.namespace, name: p.name, uid: p.uid });
const policyObject = (p: PolicyRef): InvolvedObject => ({ kind: 'ProbePolicy', apiVersion: 'outprobe.io/v1alpha1', namespace: p.namespace, name: p.name, uid: p.uid });

/**
 * Subscribes logs, metrics and Kubernetes Events to the controller's events
 * (style rule 10). Probe event texts are the kubelet's (`Unhealthy`,
 * `Readiness probe failed: …`); Observe mode gets the same events, worded as
 * what would have happened.
 */
type Handlers = { readonly [K in ControllerEvent['type']]: (e: Extract<ControllerEvent, { type: K }>) => void };
type Emit = (obj: InvolvedObject, type: EventType, reason: string, message: string, fold?: EventFold) => void;
const errorText = (error: unknown): string => (error instanceof Error ? error.message : JSON.stringify(error));

function probeHandler(metrics: Metrics, emit: Emit): Handlers['probe'] {
  return (e) => {
    const voided = e.outcome.kind === 'errored' && e.outcome.stall !== undefined;
    metrics.recordProbe({ policy: e.target.policy, kind: e.target.kind, handler: e.target.probe.handler.type, result: voided ? 'voided' : e.outcome.kind, durationSeconds: e.durationMs / 1000 });
    // A voided pass is this process's fault, not the pod's: no Event (each voided attempt is logged at debug).
    if (voided) return;
    const title = probeKindTitle(e.target.kind);
    const pod = podObject(e.pod);
    if (e.outcome.kind === 'failure') emit(pod, 'Warning', 'Unhealthy', `${title} probe failed: ${e.outcome.output}`);
    else if (e.outcome.kind === 'warning') emit(pod, 'Warning', 'ProbeWarning', `${title} probe warning: ${e.outcome.output}`);
    else if (e.outcome.kind === 'errored') emit(pod, 'Warning', 'Unhealthy', `${title} probe errored and resulted in unknown state: ${e.outcome.error}`);
  };
}

export function reporter(sinks: { readonly log: Logger; readonly metrics: Metrics; readonly events: EventRecorder }): (e: ControllerEvent) => void {
  const { log, metrics, events } = sinks;
  const emit: Emit = (obj, type, reason, message, fold) => {
    events.record(obj, type, reason, message, fold);
  };
  const ref = (p: { readonly namespace: string; readonly name: string }): string => `${p.namespace}/${p.name}`;
  const handlers: Handlers = {
    probe: probeHandler(metrics, emit),
    'probe-voided': (e) => {
      metrics.recordProbeVoided({ namespace: e.pod.namespace, policy: e.target.policy, kind: e.target.kind });
      log.debug('probe failure voided: this process stalled during the attempt; retried, not counted', {
        policy: e.target.policy, pod: ref(e.pod), container: e.target.container, kind: e.target.kind,
        cause: e.note.cause, stallSeconds: e.note.stallMs / 1000, boundSeconds: e.note.boundMs / 1000, failure: e.note.failure,
      });
    },
    'pass-start': (e) => {
      metrics.observeScheduleLag(e.namespace, e.policy, e.lagMs / 1000);
    },
    transition: (e) => {
      metrics.recordTransition({ policy: e.target.policy, kind: e.target.kind, to: e.transition.to });
      const fields = { policy: e.target.policy, pod: ref(e.pod), container: e.target.container, kind: e.target.kind, from: e.transition.from, to: e.transition.to, cause: e.transition.cause };
      // A new container instance's initial value is bookkeeping, not a verdict: one line per target at start-up is debug.
      if (e.transition.cause === 'initial') log.debug('transition', fields);
      else log.info('transition', fields);
    },
    'gate-write': (e) => {
      const written = e.result === 'written' && e.timing !== undefined ? { status: e.condition.status, delaySeconds: e.timing.sinceDesiredMs / 1000 } : undefined;
      metrics.recordGateWrite(e.result, written);
      if (e.result === 'written') {
        const fold = e.policy === undefined ? undefined : { into: policyObject(e.policy), reason: 'ReadinessGateChangesFolded', what: 'gate changes' };
        emit(podObject(e.pod), 'Normal', 'ReadinessGateChanged', `Set condition ${e.condition.type} to ${e.condition.status}: ${e.condition.message}`, fold);
        // A False takes the pod out of its Services: said at info, with how long it took from the verdict (issue 17).
        const fields = { pod: ref(e.pod), conditionType: e.condition.type, status: e.condition.status, reason: e.condition.reason, ...(e.timing === undefined ? {} : { sinceDesiredSeconds: e.timing.sinceDesiredMs / 1000, requestSeconds: e.timing.requestMs / 1000 }) };
        if (e.condition.status === 'False') log.info('gate written', fields);
        else log.debug('gate written', fields);
      }
      if (e.result === 'failed') log.warn('gate write failed, will retry', { pod: ref(e.pod), error: errorText(e.error) });
    },
    'gate-repair': (e) => {
      metrics.recordGateRepair();
      log.info('readiness gate changed by another writer: writing it back', { pod: ref(e.pod), conditionType: e.condition.type, server: e.serverStatus ?? null, status: e.condition.status });
    },
    'gate-skipped': (e) => {
      if (e.why === 'observe') emit(podObject(e.pod), 'Normal', 'WouldChangeReadinessGate', `Observe mode: would set condition ${e.condition.type} to ${e.condition.status}: ${e.condition.message}`);
      else if (e.why === 'foreign') log.warn('readiness condition written by another writer (not outprobe): left alone', { pod: ref(e.pod), conditionType: e.condition.type });
      else log.debug('pod lacks the readiness gate: probed, not written', { pod: ref(e.pod), conditionType: e.condition.type });
    },
    remediation: (e) => {
      reportRemediation(e, { metrics, log, emit });
    },
    'readiness-panic': (e) => {
      metrics.setReadinessPanic({ namespace: e.policy.namespace, policy: ref(e.policy), panic: e.panic, held: e.counts.held, failedOpen: e.counts.failing - e.counts.held });
      if (e.change === 'counts') return;
      const message = e.panic
        ? panicMessage(e.counts)
        : `${e.counts.failing} of ${e.counts.gated} gated pods fail readiness, within maxUnreadyPercent ${e.counts.maxUnreadyPercent}% less the ${panicExitMarginPercent}-point margin: readiness panic ended, failing pods are held unready again`;
      emit(policyObject(e.policy), e.panic ? 'Warning' : 'Normal', e.panic ? 'ReadinessPanic' : 'ReadinessPanicEnded', message);
      log.warn(message, { policy: ref(e.policy) });
    },
    'readiness-hold': (e) => {
      const fields = { policy: ref(e.policy), arrived: e.arrived, allowance: e.allowance, windowSeconds: e.windowMs / 1000 };
      if (e.holding) log.warn('readiness hold: failures arrive faster than this replica may hold them False; no new False gate until the hold ends', fields);
      else log.info('readiness hold ended', fields);
    },
    halt: (e) => {
      metrics.alerts.setRemediationHalted(e.policy.namespace, ref(e.policy), e.halted);
      emit(policyObject(e.policy), e.halted ? 'Warning' : 'Normal', e.halted ? 'RemediationHalted' : 'RemediationResumed', e.message);
      log.warn(e.message, { policy: ref(e.policy) });
    },
    'policy-invalid': (e) => {
      const message = e.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      emit(policyObject(e.policy), 'Warning', 'InvalidPolicy', message);
      log.warn('invalid ProbePolicy', { policy: ref(e.policy), issues: message });
    },
    'policy-valid': (e) => {
      log.info('ProbePolicy applied', { policy: ref(e.policy) });
    },
    'policy-limited': (e) => {
      const message = e.notes.join('; ');
      emit(policyObject(e.policy), 'Warning', 'RemediationLimited', message);
      log.warn('ProbePolicy limited by the installer', { policy: ref(e.policy), limits: message });
    },
    'policy-timeout-capped': (e) => {
      const probes = e.capped.map((c) => `${c.kind} probe timeoutSeconds ${c.requestedSeconds} runs with ${c.appliedSeconds}`).join(', ');
      const message = `${probes}: above the controller's maximum probe timeout (--max-probe-timeout)`;
      emit(policyObject(e.policy), 'Warning', 'ProbeTimeoutCapped', message);
      log.warn(message, { policy: ref(e.policy) });
    },
    'policy-removed': (e) => {
      metrics.forgetPolicy(ref(e.policy));
      log.info('ProbePolicy removed', { policy: ref(e.policy) });
    },
    divergence: (e) => {
      if (e.diverged) emit(podObject(e.pod), 'Warning', 'ReachabilityDiverged', e.message);
      log.info(e.diverged ? 'pod readiness diverged: the node and outprobe disagree' : 'pod no longer diverged', { policy: ref(e.policy), pod: ref(e.pod), message: e.message });
    },
    'divergence-count': (e) => {
      metrics.setDivergentPods(e.policy.namespace, ref(e.policy), e.diverged);
    },
    'no-vantage': (e) => {
      emit(podObject(e.pod), e.blind ? 'Warning' : 'Normal', e.blind ? 'NoVantage' : 'VantageRestored', e.message);
      log.info(e.blind ? 'pod without a vantage: not probed, gate kept True' : 'pod has a vantage again', { policy: ref(e.policy), pod: ref(e.pod) });
    },
    'no-vantage-count': (e) => {
      metrics.setNoVantagePods(e.policy.namespace, ref(e.policy), e.count);
    },
    'gate-conflict': (e) => {
      emit(policyObject(e.policy), 'Warning', 'ConditionTypeConflict', e.message);
      log.warn(e.message, { policy: ref(e.policy) });
    },
    'plan-issue': (e) => {
      log.warn(e.issue.message, { policy: e.issue.policy });
      // A container whose own probe a fromContainer policy cannot run (ADR 0023): said on the pod, never guessed.
      if (e.issue.code !== 'container_missing') emit(podObject(e.pod), 'Warning', 'ContainerProbeUnavailable', `ProbePolicy ${e.policy?.name ?? e.issue.policy}: ${e.issue.message}`);
    },
    'status-write': (e) => {
      if (e.result === 'failed') log.warn('status write failed, will retry', { policy: ref(e.policy), error: errorText(e.error) });
    },
    reflector: (e) => {
      if (e.restart !== undefined) metrics.alerts.recordWatchRestart(e.resource, e.restart);
      if (e.object !== undefined) {
        metrics.recordSkippedObject(e.resource);
        log.warn(`${e.resource} reflector: skipped an object it cannot read`, { ...e.object, error: errorText(e.error) });
      } else if (e.error === undefined) log.debug(`${e.resource} reflector: ${e.detail}`);
      else log.warn(`${e.resource} reflector: ${e.detail}`, { error: errorText(e.error) });
    },
  };
  return (e) => {
    (handlers[e.type] as (e: ControllerEvent) => void)(e);
  };
}

function reportRemediation(
  e: Extract<ControllerEvent, { type: 'remediation' }>,
  sinks: { readonly metrics: Metrics; readonly log: Logger; readonly emit: (obj: InvolvedObject, type: EventType, reason: string, message: string) => void },
): void {
  const policy = `${e.policy.namespace}/${e.policy.name}`;
  sinks.metrics.recordRemediation({ policy, action: e.action, result: e.result });
  const reasons: Record<typeof e.result, readonly [EventType, string]> = {
    evicted: ['Normal', 'Remediated'],
    deleted: ['Normal', 'Remediated'],
    observe: ['Normal', 'WouldRemediate'],
    skipped_budget: ['Warning', 'RemediationDeferred'],
    rate_limited: ['Warning', 'RemediationDeferred'],
    halted: ['Warning', 'RemediationHalted'],
    waiting: ['Normal', 'RemediationWaiting'],
    pdb_blocked: ['Warning', 'RemediationBlocked'],
    conflict: ['Normal', 'RemediationSkipped'],
    not_found: ['Normal', 'RemediationSkipped'],
    failed: ['Warning', 'RemediationFailed'],
  };
  const [type, reason] = reasons[e.result];
  sinks.emit(podObject(e.pod), type, reason, e.message);
  sinks.log.info(e.message, { policy, pod: `${e.pod.namespace}/${e.pod.name}`, result: e.result });
}
