import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** What the metrics read of the shared response-head budget (ADR 0056), at scrape time. */
export interface HeadBudgetSource {
  readonly heldBytes: number;
  readonly capacityBytes: number;
  readonly refused: number;
}

/**
 * `outprobe_probe_head_budget_bytes{state="held"|"capacity"}` and
 * `outprobe_probe_head_budget_refused_total`: probes failed because the
 * response heads of the probes in flight had spent the shared budget.
 */
export function watchHeadBudget(registry: Registry, budget: HeadBudgetSource): void {
  const registers = [registry];
  new Gauge({
    name: 'outprobe_probe_head_budget_bytes',
    help: 'The shared budget for response-head bytes held by HTTP probes in flight beyond each probe\'s free 32 KiB (ADR 0056): drawn now (state="held") and its size (state="capacity").',
    labelNames: ['state'],
    registers,
    collect() {
      this.set({ state: 'held' }, budget.heldBytes);
      this.set({ state: 'capacity' }, budget.capacityBytes);
    },
  });
  let counted = 0;
  new Counter({
    name: 'outprobe_probe_head_budget_refused_total',
    help: 'HTTP probes failed because their response head would have overdrawn the shared head budget (ADR 0056): a target answering with huge heads while many probes are in flight.',
    registers,
    collect() {
      this.inc(budget.refused - counted);
      counted = budget.refused;
    },
  });
}
