import type { Controller } from '../controller/index.ts';
import type { FleetView } from './report.ts';

/** One replica's own numbers, for `kubectl outprobe status`. */
export interface FleetReport {
  readonly version: 1;
  readonly replica: { readonly identity: string; readonly vantage: string | null; readonly standingDown: boolean };
  readonly at: string;
  readonly members: readonly string[] | null;
  readonly ready: boolean;
  readonly pods: number;
  readonly targets: { readonly readiness: number; readonly liveness: number; readonly startup: number };
  readonly gateWrites: { readonly pending: number; readonly held: number };
  readonly schedulerLagMs: number;
}

export function fleetReport(controller: Controller, fleet: FleetView, now: number): FleetReport {
  const targets = { readiness: 0, liveness: 0, startup: 0 };
  const pods = new Set<string>();
  for (const t of controller.targets.all()) {
    targets[t.plan.kind]++;
    pods.add(t.plan.podUid);
  }
  return {
    version: 1,
    replica: { identity: fleet.identity, vantage: fleet.vantage() ?? null, standingDown: fleet.standingDown?.() ?? false },
    at: new Date(now).toISOString(),
    members: fleet.members() ?? null,
    ready: controller.ready,
    pods: pods.size,
    targets,
    gateWrites: { pending: controller.gates.pending, held: controller.gates.held },
    schedulerLagMs: Math.max(0, Math.round(controller.scheduler.stats().lastLagMs)),
  };
}
