import type { LabelSelector } from '../policy/index.ts';

/**
 * A label's value, looked up as an own key only: `constructor`, `toString`
 * and friends are valid label keys, and a plain lookup would find
 * Object.prototype's members under them.
 */
function labelValue(labels: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** metav1.LabelSelector semantics: every matchLabels pair and every expression must hold. */
export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels)) if (labelValue(labels, k) !== v) return false;
  return selector.matchExpressions.every((req) => {
    const value = labelValue(labels, req.key);
    switch (req.operator) {
      case 'In':
        return value !== undefined && req.values.includes(value);
      case 'NotIn':
        return value === undefined || !req.values.includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
    }
  });
}
