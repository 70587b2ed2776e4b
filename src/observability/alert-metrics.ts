import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { WatchRestartReason } from '../kube/index.ts';

const prefix = 'outprobe_';

/**
 * Series that exist for the chart's alerts (docs/adr/0061-alerts.md) and that
 * no other stage exposed: whether a policy's remediation is halted on this
 * replica, and how often the controller's watches start again. Registered in
 * the replica's registry; `policy` is `<namespace>/<name>` beside `namespace`,
 * as on every per-policy series (docs/operations.md#metrics).
 */
export class AlertMetrics {
  readonly #halted: Gauge<'namespace' | 'policy'>;
  readonly #watchRestarts: Counter<'resource' | 'reason'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#halted = new Gauge({
      name: `${prefix}remediation_halted`,
      help: 'Whether this replica halts a policy\'s remediation (1): more of its pods fail at once than haltAbovePercentFailing allows (the policy\'s RemediationHalted condition). By namespace and policy.',
      labelNames: ['namespace', 'policy'],
      registers,
    });
    this.#watchRestarts = new Counter({
      name: `${prefix}watch_restarts_total`,
      help: 'Times a controller watch started again, by resource and reason (timeout: ended by the server, routine; closed; inactive: silent past the bound; expired: 410 Gone, relisted; error: a LIST or WATCH failed, backed off).',
      labelNames: ['resource', 'reason'],
      registers,
    });
  }

  /** A policy's remediation halted (true) or resumed (false) on this replica. `policy` is `<namespace>/<name>`. */
  setRemediationHalted(namespace: string, policy: string, halted: boolean): void {
    this.#halted.set({ namespace, policy }, halted ? 1 : 0);
  }

  /** Deletes the policy's series (`policy` is `<namespace>/<name>`). */
  forgetPolicy(policy: string): void {
    this.#halted.remove({ namespace: policy.slice(0, Math.max(0, policy.indexOf('/'))), policy });
  }

  recordWatchRestart(resource: string, reason: WatchRestartReason): void {
    this.#watchRestarts.inc({ resource, reason });
  }
}
