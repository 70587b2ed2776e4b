/**
 * The fleet's remediation ledger (ADR 0033), pure: one Lease per policy in
 * the release namespace (`outprobe-remediations-<policy UID>`) whose
 * annotation lists the remediations the replicas started recently, each as
 * {pod UID, pod key, replica, at}. Every replica reads it and appends to it,
 * with the Lease's resourceVersion as precondition, before it evicts or
 * deletes: in-flight remediations of every replica count against the
 * policy's maxUnavailable, and pods remediated recently count in its halt
 * (an evicted pod and its replacement do not reset the count). Entries older
 * than the window are pruned on every write.
 */
export interface LedgerEntry {
  /** The remediated pod's UID. */
  readonly uid: string;
  /** Its `namespace/name`, to look it up in the informer's store. */
  readonly key: string;
  /** The replica that appended it. */
  readonly replica: string;
  /** When, in ms since the epoch. */
  readonly at: number;
}

/** The Lease annotation carrying the entries. */
export const ledgerAnnotation = 'outprobe.io/remediations';
/** Label on every ledger Lease (never the shard label: a ledger is not a member). */
export const ledgerLabel = 'outprobe.io/remediation-ledger';
/** At most this many entries are kept (newest first): far under a Lease's 256 KiB of annotations. */
export const maxLedgerEntries = 512;

export const ledgerName = (policyUid: string): string => `outprobe-remediations-${policyUid}`.slice(0, 253);

/** `[[uid,key,replica,at],…]`, oldest first. */
export function encodeLedger(entries: readonly LedgerEntry[]): string {
  return JSON.stringify(entries.slice(-maxLedgerEntries).map((e) => [e.uid, e.key, e.replica, Math.floor(e.at)]));
}

/** The entries of an annotation; malformed ones are dropped, a malformed annotation reads as none. */
export function decodeLedger(text: string | undefined): LedgerEntry[] {
  if (text === undefined) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  const out: LedgerEntry[] = [];
  for (const e of raw as unknown[]) {
    if (!Array.isArray(e)) continue;
    const [uid, key, replica, at] = e as unknown[];
    if (typeof uid !== 'string' || typeof key !== 'string' || typeof replica !== 'string' || typeof at !== 'number' || !Number.isFinite(at)) continue;
    out.push({ uid, key, replica, at });
  }
  return out.slice(-maxLedgerEntries);
}

/** The entries still inside the window at `now` (an entry from the future, a skewed clock, is kept). */
export function pruneLedger(entries: readonly LedgerEntry[], now: number, windowMs: number): LedgerEntry[] {
  return entries.filter((e) => e.at > now - windowMs);
}

/** The entries after appending `entry` (replacing an older entry for the same pod), pruned. */
export function appendEntry(entries: readonly LedgerEntry[], entry: LedgerEntry, now: number, windowMs: number): LedgerEntry[] {
  return [...pruneLedger(entries, now, windowMs).filter((e) => e.uid !== entry.uid), entry].slice(-maxLedgerEntries);
}

/** The entries without `replica`'s entry for the pod `uid` (a remediation that did not happen). */
export function removeEntry(entries: readonly LedgerEntry[], uid: string, replica: string): LedgerEntry[] {
  return entries.filter((e) => !(e.uid === uid && e.replica === replica));
}
