/**
 * A binary min-heap of (dueAt, key, generation) entries. Invariant: every
 * parent's dueAt is <= its children's. Entries are never removed from the
 * middle: a rescheduled or removed target bumps its generation, and the stale
 * entry is dropped when it reaches the top (lazy deletion), which keeps every
 * operation O(log n) with 50,000+ targets.
 */
export interface HeapEntry {
  readonly dueAt: number;
  readonly key: string;
  readonly generation: number;
}

export class DueHeap {
  readonly #items: HeapEntry[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): HeapEntry | undefined {
    return this.#items[0];
  }

  push(entry: HeapEntry): void {
    const items = this.#items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent];
      if (p === undefined || p.dueAt <= entry.dueAt) break;
      items[i] = p;
      i = parent;
    }
    items[i] = entry;
  }

  pop(): HeapEntry | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const l = items[left];
      const r = items[right];
      let child = left;
      let c = l;
      if (r !== undefined && l !== undefined && r.dueAt < l.dueAt) {
        child = right;
        c = r;
      }
      if (c === undefined || c.dueAt >= last.dueAt) break;
      items[i] = c;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
