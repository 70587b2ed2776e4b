/**
 * Orders two resourceVersions of objects of the same resource, as client-go's
 * `CompareResourceVersion` does (KEP-5504, stable in Kubernetes 1.35: an API
 * server's resourceVersions are decimal integers without leading zeros, and
 * comparable). Negative when `a` is older, 0 when equal, positive when newer;
 * `null` when either is not of that form (an older or another API server, or
 * an aggregated API that keeps the old "opaque string" rule): only equality
 * may be used then.
 */
export function compareResourceVersions(a: string, b: string): number | null {
  if (!comparable.test(a) || !comparable.test(b)) return null;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

const comparable = /^[1-9][0-9]*$/;
