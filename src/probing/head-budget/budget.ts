/**
 * A shared budget for the bytes that HTTP probes in flight hold of their
 * response heads (ADR 0056). Go's client, hence the kubelet's, lets one
 * response head grow to 10 MiB (ADR 0013); with hundreds of probes in flight
 * that is gigabytes, far above the chart's memory limit. Each probe may hold
 * `freeBytesPerProbe` on its own (a real head is a few hundred bytes); what
 * it holds beyond that is drawn from one pool of `capacityBytes` for every
 * probe at once. A probe whose head would overdraw the pool fails as an
 * oversized head does (response-parser.ts), and its bytes go back.
 */
export interface HeadBudgetOptions {
  /** The pool shared by every probe in flight. @default 16 MiB */
  readonly capacityBytes?: number;
  /** What one probe may hold without drawing from the pool. @default 32 KiB */
  readonly freeBytesPerProbe?: number;
}

/** What one probe holds of the pool; `hold` and `release` are its only moves. */
export class HeadLease {
  readonly #budget: HeadBudget;
  #charged = 0;

  constructor(budget: HeadBudget) {
    this.#budget = budget;
  }

  /** Bytes this probe holds of the pool now. */
  get charged(): number {
    return this.#charged;
  }

  /**
   * The probe now holds `bytes` in all: draws what exceeds its free bytes.
   * False when the pool cannot give it (nothing is drawn then: the probe is
   * about to fail and release).
   */
  hold(bytes: number): boolean {
    const want = Math.max(0, bytes - this.#budget.freeBytesPerProbe);
    if (want <= this.#charged) return true;
    if (!this.#budget.draw(want - this.#charged)) return false;
    this.#charged = want;
    return true;
  }

  /** Gives everything back (idempotent). */
  release(): void {
    if (this.#charged === 0) return;
    this.#budget.giveBack(this.#charged);
    this.#charged = 0;
  }
}

export class HeadBudget {
  readonly capacityBytes: number;
  readonly freeBytesPerProbe: number;
  #held = 0;
  #refused = 0;
  #peak = 0;

  constructor(options: HeadBudgetOptions = {}) {
    this.capacityBytes = options.capacityBytes ?? 16 << 20;
    this.freeBytesPerProbe = options.freeBytesPerProbe ?? 32 << 10;
  }

  /** Bytes drawn from the pool now. */
  get heldBytes(): number {
    return this.#held;
  }

  /** The most ever drawn at once. */
  get peakBytes(): number {
    return this.#peak;
  }

  /** Probes refused because the pool was spent. */
  get refused(): number {
    return this.#refused;
  }

  /** One probe's account. */
  lease(): HeadLease {
    return new HeadLease(this);
  }

  /** @internal HeadLease's: false (and counted) when `bytes` more would overdraw the pool. */
  draw(bytes: number): boolean {
    if (this.#held + bytes > this.capacityBytes) {
      this.#refused++;
      return false;
    }
    this.#held += bytes;
    if (this.#held > this.#peak) this.#peak = this.#held;
    return true;
  }

  /** @internal HeadLease's. */
  giveBack(bytes: number): void {
    this.#held = Math.max(0, this.#held - bytes);
  }
}

/** The process's pool: every ProbeDispatcher and raw exchange draws from it unless given another. */
export const sharedHeadBudget = new HeadBudget();
