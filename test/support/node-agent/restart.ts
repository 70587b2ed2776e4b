/**
 * A kubelet container restart after a liveness (or startup) probe failure,
 * emulated in the pod's status: the old instance is recorded as terminated
 * (exit 137, as after SIGKILL) in `lastState`, and a new instance runs from
 * now with a new containerID, restartCount + 1 and ready false. The restart is
 * immediate: the kubelet's CrashLoop back-off only starts with the second crash.
 */
import type { AgentPod, Raw } from './pod.ts';
import { projectAgentPod } from './pod.ts';
import { rfc3339 } from './readiness.ts';

/** `kwok://<uid>-web-0` → `kwok://<uid>-web-1`; any other ID gets `-1` appended. */
export function nextContainerId(id: string, restartCount: number): string {
  const m = /^(.*)-(\d+)$/.exec(id);
  return m === null ? `${id}-${restartCount}` : `${m[1] ?? ''}-${restartCount}`;
}

function restarted(s: Raw, now: number, hasStartupProbe: boolean): Raw {
  const restartCount = (typeof s['restartCount'] === 'number' ? s['restartCount'] : 0) + 1;
  const oldId = typeof s['containerID'] === 'string' ? s['containerID'] : '';
  const running = (s['state'] as { running?: { startedAt?: string } } | undefined)?.running;
  return {
    ...s,
    restartCount,
    containerID: nextContainerId(oldId, restartCount),
    ready: false,
    started: !hasStartupProbe,
    state: { running: { startedAt: rfc3339(now) } },
    lastState: { terminated: { exitCode: 137, reason: 'Error', startedAt: running?.startedAt ?? null, finishedAt: rfc3339(now), containerID: oldId } },
  };
}

/**
 * The pod with the named containers restarted, if the instance that failed
 * (`failedIds`, name → containerID) is still the current one; `changed`
 * lists the containers actually restarted.
 */
export function applyRestarts(pod: AgentPod, failedIds: ReadonlyMap<string, string>, now: number): { pod: AgentPod; changed: string[] } {
  const changed: string[] = [];
  const rewrite = (list: readonly Raw[] | undefined): readonly Raw[] | undefined => list?.map((s) => {
    const name = String(s['name']);
    if (failedIds.get(name) !== s['containerID'] || s['containerID'] === undefined) return s;
    changed.push(name);
    const c = pod.containers.find((x) => x.name === name);
    return restarted(s, now, c?.startupProbe !== undefined);
  });
  if (failedIds.size === 0) return { pod, changed };
  const status = { ...(pod.raw['status'] as Raw | undefined) };
  const cs = rewrite(pod.containerStatuses);
  const ics = rewrite(pod.initContainerStatuses);
  if (cs !== undefined) status['containerStatuses'] = cs;
  if (ics !== undefined) status['initContainerStatuses'] = ics;
  return { pod: projectAgentPod({ ...pod.raw, status }), changed };
}
