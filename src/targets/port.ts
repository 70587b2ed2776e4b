import type { PodContainer } from '../kube/index.ts';
import type { PortRef } from '../policy/index.ts';

export type PortResolution = { readonly ok: true; readonly port: number } | { readonly ok: false; readonly error: string };

/**
 * probe.ResolveContainerPort (kubelet-probes.md §1.3): a number is used as
 * is; a name is looked up in the container's ports (first match, protocol
 * ignored); failing that, the string is parsed as a decimal (Go's
 * strconv.Atoi, whose error text is kept); the result must be 1–65535.
 * A failure is a prober *error*: the attempt is void, never counted.
 */
export function resolvePort(ref: PortRef, container: PodContainer | undefined): PortResolution {
  let port: number;
  if (typeof ref === 'number') {
    port = ref;
  } else {
    const named = container?.ports.find((p) => p.name === ref);
    if (named !== undefined) {
      port = named.containerPort;
    } else if (/^[+-]?\d+$/.test(ref)) {
      port = Number(ref);
    } else {
      return { ok: false, error: `strconv.Atoi: parsing ${JSON.stringify(ref)}: invalid syntax` };
    }
  }
  if (port > 0 && port < 65536) return { ok: true, port };
  return { ok: false, error: `invalid port number: ${port}` };
}
