import { Reflector } from './reflector.ts';
import type { RawObject, ReflectorOptions, ReflectorSignal, StoreEvent } from './reflector.ts';

export interface ReflectorSetOptions<T, W extends RawObject = RawObject> extends Omit<ReflectorOptions<T, W>, 'path' | 'onEvent' | 'onSignal' | 'project'> {
  /** Collection path in one namespace, or across all when `namespace` is undefined. */
  readonly path: (namespace: string | undefined) => string;
  /** Namespaces to watch, one list+watch each (matching per-namespace RBAC); empty means all namespaces. */
  readonly namespaces: readonly string[];
  readonly project: (raw: W, previous: T | undefined) => T;
  readonly onEvent: (event: StoreEvent<T>) => void;
  readonly onSignal?: (signal: ReflectorSignal, namespace: string | undefined) => void;
}

/**
 * One resource reflected in a list of namespaces: a Reflector per namespace,
 * their objects in one store. Only objects whose `metadata.namespace` is the
 * namespace a reflector watches ever reach the store or `onEvent`, so nothing
 * downstream can act on an object outside the list, whatever a server sends.
 * With no namespaces it is a single cluster-wide Reflector.
 */
export class ReflectorSet<T, W extends RawObject = RawObject> {
  readonly #reflectors: readonly Reflector<T, W>[];
  readonly #store: Map<string, T> | undefined;

  constructor(options: ReflectorSetOptions<T, W>) {
    const namespaces = [...new Set(options.namespaces)];
    if (namespaces.length === 0) {
      this.#store = undefined;
      this.#reflectors = [new Reflector<T, W>({ ...options, path: options.path(undefined), onSignal: (s) => options.onSignal?.(s, undefined) })];
      return;
    }
    const store = new Map<string, T>();
    this.#store = store;
    this.#reflectors = namespaces.map((ns) => new Reflector<T, W>({
      ...options,
      path: options.path(ns),
      // Checked on the raw object, before projection: a projection may not keep the namespace.
      project: (raw, previous) => (raw.metadata?.namespace === ns ? options.project(raw, previous === foreign ? undefined : previous) : (foreign as T)),
      onEvent: (e) => {
        if (e.object === foreign) return;
        if (e.type === 'DELETED') store.delete(e.key);
        else store.set(e.key, e.object);
        options.onEvent(e);
      },
      onSignal: (s) => options.onSignal?.(s, ns),
    }));
  }

  /** Every reflected object, by `namespace/name`. */
  get store(): ReadonlyMap<string, T> {
    return this.#store ?? (this.#reflectors[0]?.store ?? new Map<string, T>());
  }

  /** Every namespace has been listed once. */
  get synced(): boolean {
    return this.#reflectors.every((r) => r.synced);
  }

  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.#reflectors.map((r) => r.run(signal)));
  }
}

/** Stands in for an object of another namespace, which is never stored or emitted. */
const foreign: unknown = Symbol('outside the watched namespaces');
