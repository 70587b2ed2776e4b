import type { Pod } from '../kube/index.ts';
import { guardedAttempt } from '../probing/index.ts';
import type { Outcome, StallGuard } from '../probing/index.ts';
import { cleanMessage } from '../secondopinion/index.ts';
import type { Question, SecondOpinionAnswer, SecondOpinionRequest } from '../secondopinion/index.ts';
import { planTargets, selects } from '../targets/index.ts';
import type { AddressGuard } from '../targets/index.ts';
import type { GateCondition, WriteContext } from '../writeback/index.ts';
import type { PolicyEntry } from './policies.ts';
import type { RemediationRequest } from './remediation.ts';
import type { TargetSet } from './target-set.ts';
import { probePlan } from './runner.ts';
import type { Probers, Target } from './runner.ts';

export interface AnswerDeps {
  readonly policies: ReadonlyMap<string, PolicyEntry>;
  /** The pods this replica's informer holds (all of them, owned or not). */
  readonly pods: () => Iterable<Pod>;
  readonly probers: Probers;
  readonly guard: AddressGuard;
  readonly stall?: StallGuard | undefined;
}

const unknown = (message: string): SecondOpinionAnswer => ({ result: 'unknown', message });

function answerOf(outcome: Outcome): SecondOpinionAnswer {
  switch (outcome.kind) {
    case 'success':
    case 'warning':
      return { result: 'success', message: cleanMessage(outcome.output || 'probe succeeded') };
    case 'failure':
      return { result: 'failure', message: cleanMessage(outcome.output) };
    case 'errored':
      return unknown(cleanMessage(`probe errored: ${outcome.error}`));
  }
}

/**
 * Answers a peer's second-opinion request (ADR 0018): the pod by UID from
 * this replica's own informer, the policy from its own cache, the target from
 * the same planning code as its own probes, one attempt with its own
 * executors and address guard. Nothing of the request but the three keys is
 * used, so it cannot aim a probe anywhere the policy would not. A failure the
 * stall guard voids is `unknown`, not `failure`.
 */
export async function answerSecondOpinion(req: SecondOpinionRequest, deps: AnswerDeps, signal: AbortSignal): Promise<SecondOpinionAnswer> {
  const policy = deps.policies.get(req.policy)?.policy;
  if (policy === undefined) return unknown('policy unknown or invalid on this replica');
  let pod: Pod | undefined;
  for (const p of deps.pods()) {
    if (p.uid === req.podUid && p.namespace === (policy.metadata.namespace ?? '')) {
      pod = p;
      break;
    }
  }
  if (pod === undefined) return unknown('pod unknown on this replica');
  if (pod.deletionTimestamp !== undefined || pod.phase === 'Succeeded' || pod.phase === 'Failed') return unknown('pod is terminating or terminated');
  if (!selects(policy, pod)) return unknown('the policy does not select this pod');
  const plan = planTargets(policy, pod).targets.find((t) => t.kind === req.probe);
  if (plan === undefined) return unknown(`the policy has no ${req.probe} probe for this pod`);
  const once = (): Promise<Outcome> => probePlan(plan, pod, deps, signal);
  const stall = deps.stall;
  const outcome = stall === undefined ? await once() : await guardedAttempt(once, stall, plan.probe.timeoutSeconds * 1000, () => undefined);
  return answerOf(outcome);
}

/** The question about a failing target (what the asking side sends and reports). */
export function questionFor(target: Target, pod: { readonly namespace: string; readonly name: string; readonly uid: string }, since: number, action: 'gate_false' | 'remediation'): Question {
  const { plan } = target;
  return {
    action,
    policy: plan.policy,
    podUid: pod.uid,
    probe: plan.kind,
    since,
    periodMs: plan.probe.periodSeconds * 1000,
    timeoutMs: plan.probe.timeoutSeconds * 1000,
    pod,
    ownView: target.lastFailure,
  };
}

/** What the asking side needs from the controller. */
export interface AskingDeps {
  readonly targets: Pick<TargetSet, 'get' | 'readinessTarget'>;
  readonly policies: ReadonlyMap<string, PolicyEntry>;
}

type Confirm = { confirm(question: Question): boolean };

/**
 * May a False gate be written (ADR 0018)? Only a change of readiness is asked
 * about (not a False over a False), and only where the policy wants it.
 */
export function gateSecondOpinion(so: Confirm, deps: AskingDeps, w: { readonly condition: GateCondition; readonly since: number; readonly ctx: WriteContext }): boolean {
  if (w.ctx.serverStatus === 'False') return true;
  const target = deps.targets.readinessTarget(w.ctx.pod.uid, w.condition.type);
  if (target === undefined || deps.policies.get(target.plan.policy)?.policy?.spec.secondOpinion === false) return true;
  return so.confirm(questionFor(target, w.ctx.pod, w.since, 'gate_false'));
}

/** May this remediation be sent (ADR 0018)? */
export function remediationSecondOpinion(so: Confirm, deps: AskingDeps & { readonly pod: (key: string) => Pod | undefined }, req: RemediationRequest, since: number): boolean {
  const target = deps.targets.get(`${req.policy}/${req.podUid}/${req.container}/${req.kind}`);
  const pod = deps.pod(req.podKey);
  if (target === undefined || pod === undefined || deps.policies.get(req.policy)?.policy?.spec.secondOpinion === false) return true;
  return so.confirm(questionFor(target, { namespace: pod.namespace, name: pod.name, uid: pod.uid }, since, 'remediation'));
}
