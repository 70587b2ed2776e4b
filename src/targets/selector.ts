import type { LabelSelector } from '../policy/index.ts';

/** metav1.LabelSelector semantics: every matchLabels pair and every expression must hold. */
export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels)) if (labels[k] !== v) return false;
  return selector.matchExpressions.every((req) => {
    const value = labels[req.key];
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
