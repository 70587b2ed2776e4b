import { decidePanic, panicCounts } from '../panic/index.ts';
import type { PanicCounts, PanicInput, PanicState } from '../panic/index.ts';
import type { Observer, PolicyRef } from './events.ts';

/** A policy's panic state as status and sharding see it (counts of this replica's share). */
export interface PanicReport {
  readonly panic: boolean;
  readonly counts: PanicCounts;
}

/**
 * Keeps each policy's panic state between decisions (the hysteresis needs
 * the previous one) and reports changes: `readiness-panic` events when panic
 * starts or ends, or its counts change. The decision itself is pure
 * (`src/panic`).
 */
export class PanicGuard {
  readonly #observe: Observer;
  readonly #states = new Map<string, { readonly state: PanicState; readonly policy: PolicyRef }>();

  constructor(observe: Observer) {
    this.#observe = observe;
  }

  evaluate(policyKey: string, policy: PolicyRef, input: PanicInput): PanicState {
    const previous = this.#states.get(policyKey)?.state;
    const state = decidePanic(input, previous);
    this.#states.set(policyKey, { state, policy });
    const counts = panicCounts(state);
    const before = previous === undefined ? undefined : panicCounts(previous);
    const change = (previous?.panic ?? false) !== state.panic ? (state.panic ? 'started' : 'ended') : JSON.stringify(before) === JSON.stringify(counts) ? null : 'counts';
    if (change !== null) this.#observe({ type: 'readiness-panic', policy, change, panic: state.panic, counts });
    return state;
  }

  state(policyKey: string): PanicState | undefined {
    return this.#states.get(policyKey)?.state;
  }

  report(policyKey: string): PanicReport | null {
    const s = this.#states.get(policyKey)?.state;
    return s === undefined ? null : { panic: s.panic, counts: panicCounts(s) };
  }

  /** The policy is gone or no longer writes gates: its state (and, if it was in panic, the panic) ends. */
  forget(policyKey: string): void {
    const entry = this.#states.get(policyKey);
    if (entry === undefined) return;
    this.#states.delete(policyKey);
    const counts = { ...panicCounts(entry.state), failing: 0, held: 0 };
    this.#observe({ type: 'readiness-panic', policy: entry.policy, change: entry.state.panic ? 'ended' : 'counts', panic: false, counts });
  }
}
