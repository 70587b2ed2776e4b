/** The three probe kinds of core/v1, named as the kubelet names its workers. */
export const probeKinds = ['readiness', 'liveness', 'startup'] as const;
export type ProbeKind = (typeof probeKinds)[number];

/** `Readiness`, `Liveness`, `Startup`: the word the kubelet puts in event messages. */
export function probeKindTitle(kind: ProbeKind): string {
  return kind.charAt(0).toUpperCase() + kind.slice(1);
}
