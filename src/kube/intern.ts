/**
 * Bounded canonicalisation caches (issue 17, ADR 0030). Every pod a watch
 * delivers is parsed into fresh strings and objects; most of them repeat
 * across pods (namespaces, label sets, container specs, condition types and
 * messages) or across versions of one pod. Keeping one copy each is what
 * lets 100,000 pods fit in a replica.
 *
 * A cache holds at most `maxEntries` values in two generations: when the
 * current one is half full it becomes the previous one and the one before is
 * dropped; a value found in the previous generation moves back to the
 * current. Values in use stay shared; values no longer asked for fall out
 * after two generations, so hostile input (a label value per pod) costs at
 * most `maxEntries` entries, never a leak.
 */
export class InternCache<V> {
  readonly #half: number;
  #current = new Map<string, V>();
  #previous = new Map<string, V>();

  constructor(maxEntries: number) {
    this.#half = Math.max(1, Math.floor(maxEntries / 2));
  }

  /** Entries held now (at most `maxEntries`). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  /** The value cached under `key` when there is one, else `value`, cached under `key` from now on. */
  intern(key: string, value: V): V {
    const hit = this.#current.get(key);
    if (hit !== undefined) return hit;
    const kept = this.#previous.get(key) ?? value;
    if (this.#current.size >= this.#half) {
      this.#previous = this.#current;
      this.#current = new Map<string, V>();
    }
    this.#current.set(key, kept);
    return kept;
  }

  clear(): void {
    this.#current = new Map<string, V>();
    this.#previous = new Map<string, V>();
  }
}

/** One shared copy of short strings that repeat (a string longer than `maxLength` is returned as it is). */
export class StringInterner {
  readonly #cache: InternCache<string>;
  readonly #maxLength: number;

  constructor(options: { readonly maxEntries: number; readonly maxLength: number }) {
    this.#cache = new InternCache<string>(options.maxEntries);
    this.#maxLength = options.maxLength;
  }

  get size(): number {
    return this.#cache.size;
  }

  intern(s: string): string {
    return s.length > this.#maxLength ? s : this.#cache.intern(s, s);
  }
}
