import type { CoreV1Event, KubernetesObject, V1Lease, V1Pod } from '@kubernetes/client-node';

/**
 * A client-node model as JSON carries it. The models type `Time` fields as
 * `Date` and `MicroTime` as `V1MicroTime`, which is what client-node's own
 * deserializer makes of a typed response; a watch event, a LIST page read by
 * the reflector and a request body are plain JSON, where those fields are
 * RFC 3339 strings (MicroTime with exactly 6 fractional digits, or the API
 * server answers 400). Typing the JSON as the model itself would let a
 * `.getTime()` on a string type-check (client-node #655, #487), so the edge
 * uses this view of the same model.
 */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? readonly Wire<U>[]
    : T extends object
      ? { readonly [K in keyof T]: Wire<T[K]> }
      : T;

/** A core/v1 Pod as the API sends it (hostile input: its owner writes it; read it defensively). */
export type PodJson = Wire<V1Pod>;
/** A coordination.k8s.io/v1 Lease, read or written. */
export type LeaseJson = Wire<V1Lease>;
/** A core/v1 Event, as outprobe writes it. */
export type EventJson = Wire<CoreV1Event>;
/** Any object: apiVersion, kind and ObjectMeta (a ProbePolicy before its schema has checked the rest). */
export type ObjectJson = Wire<KubernetesObject>;
/** A custom resource (a ProbePolicy): ObjectMeta typed, spec and status left to the resource's own schema. */
export type CustomObjectJson = ObjectJson & { readonly spec?: unknown; readonly status?: unknown };
