import { z } from 'zod';
import { livenessActions, maxVantageCount, policyDefaults, policyModes, selectorOperators, vantageDecisions, vantageSpreads } from './defaults.ts';
import { coded } from './issues.ts';
import {
  isDnsLabel,
  isLabelValue,
  isMaxUnavailable,
  isQualifiedName,
  isReservedConditionType,
  messages,
  qualifiedNamePrefixTooLong,
} from './rules.ts';
import { probeSchema } from './schema-probe.ts';

/**
 * The zod schema of a ProbePolicy object as the API stores it. It matches the
 * CRD (`crd.ts`) and adds the checks the CRD leaves to the controller (label
 * syntax in selectors, the default condition type's length). Objects read
 * from the API are validated again because they may predate a CRD upgrade.
 */

export const policyLimits = {
  /** 253-character DNS subdomain prefix, "/", 63-character name. */
  qualifiedNameLength: 317,
  containerNameLength: 63,
  labelValueLength: 63,
  matchExpressions: 64,
  selectorValues: 256,
  policyNameForDefaultConditionType: 63,
} as const;

const conditionTypeSchema = z
  .string()
  .max(policyLimits.qualifiedNameLength)
  .superRefine((value, ctx) => {
    if (!isQualifiedName(value)) {
      const message = qualifiedNamePrefixTooLong(value) ? messages.conditionTypePrefix : messages.conditionType;
      ctx.addIssue({ code: 'custom', message, ...coded('condition_type_invalid') });
    }
    if (isReservedConditionType(value)) {
      ctx.addIssue({ code: 'custom', message: messages.conditionTypeReserved, ...coded('condition_type_reserved') });
    }
  });

const containerSchema = z
  .string()
  .max(policyLimits.containerNameLength)
  .refine(isDnsLabel, { message: messages.container, ...coded('container_invalid') });

function successThresholdIsOne(block: { readonly probe: { readonly successThreshold?: number | undefined } }, ctx: z.RefinementCtx): void {
  if (block.probe.successThreshold !== undefined && block.probe.successThreshold !== 1) {
    ctx.addIssue({ code: 'custom', path: ['probe', 'successThreshold'], message: messages.successThresholdOne, ...coded('success_threshold_must_be_1') });
  }
}

const readinessSchema = z
  .object({
    conditionType: conditionTypeSchema.optional(),
    container: containerSchema.optional(),
    probe: probeSchema,
    maxUnreadyPercent: z.int().min(0).max(100).default(policyDefaults.maxUnreadyPercent),
    injectGate: z.boolean().default(policyDefaults.injectGate),
  })
  .superRefine((block, ctx) => {
    if (block.probe.terminationGracePeriodSeconds !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['probe', 'terminationGracePeriodSeconds'],
        message: messages.gracePeriodReadiness,
        ...coded('grace_period_not_allowed'),
      });
    }
  });

const livenessSchema = z
  .object({
    action: z.enum(livenessActions).default(policyDefaults.livenessAction),
    container: containerSchema.optional(),
    probe: probeSchema,
  })
  .superRefine(successThresholdIsOne);

const startupSchema = z
  .object({ container: containerSchema.optional(), probe: probeSchema })
  .superRefine(successThresholdIsOne);

const maxUnavailableSchema = z
  .custom<number | string>((v) => Number.isInteger(v) || typeof v === 'string', {
    error: 'must be of type integer or string',
    ...coded('invalid_type'),
  })
  .refine(isMaxUnavailable, { message: messages.maxUnavailable, ...coded('max_unavailable_invalid') });

const remediationSchema = z.object({
  maxUnavailable: maxUnavailableSchema.default(policyDefaults.maxUnavailable),
  haltAbovePercentFailing: z.int().min(0).max(100).default(policyDefaults.haltAbovePercentFailing),
});

function selectorIssue(ctx: z.RefinementCtx, path: (string | number)[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message, ...coded('selector_invalid') });
}

const requirementSchema = z
  .object({
    key: z.string().max(policyLimits.qualifiedNameLength),
    operator: z.enum(selectorOperators),
    values: z.array(z.string().max(policyLimits.labelValueLength)).max(policyLimits.selectorValues).default([]),
  })
  .superRefine((req, ctx) => {
    const needsValues = req.operator === 'In' || req.operator === 'NotIn';
    if (needsValues !== req.values.length > 0) selectorIssue(ctx, ['values'], messages.selectorValues);
    if (!isQualifiedName(req.key)) selectorIssue(ctx, ['key'], messages.labelKey);
    req.values.forEach((value, i) => {
      if (!isLabelValue(value)) selectorIssue(ctx, ['values', i], messages.labelValue);
    });
  });

/**
 * zod's record parse skips an own `__proto__` key (which JSON.parse creates)
 * without an issue, so `matchLabels: {"__proto__": "x"}` would become `{}` and
 * select every pod. `__proto__` is not a qualified name: reject it from the
 * raw input before the record is built.
 */
const matchLabelsSchema = z
  .preprocess((raw, ctx) => {
    if (typeof raw === 'object' && raw !== null && Object.hasOwn(raw, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: messages.labelKey, input: raw, ...coded('selector_invalid') });
    }
    return raw;
  }, z.record(z.string(), z.string().max(policyLimits.labelValueLength)))
  .default({});

const selectorSchema = z
  .object({
    matchLabels: matchLabelsSchema,
    matchExpressions: z.array(requirementSchema).max(policyLimits.matchExpressions).default([]),
  })
  .superRefine((selector, ctx) => {
    for (const [key, value] of Object.entries(selector.matchLabels)) {
      if (!isQualifiedName(key)) selectorIssue(ctx, ['matchLabels', key], messages.labelKey);
      if (!isLabelValue(value)) selectorIssue(ctx, ['matchLabels', key], messages.labelValue);
    }
  });

export const specSchema = z
  .object({
    selector: selectorSchema,
    mode: z.enum(policyModes).default(policyDefaults.mode),
    readiness: readinessSchema.optional(),
    liveness: livenessSchema.optional(),
    startup: startupSchema.optional(),
    remediation: remediationSchema.prefault({}),
    secondOpinion: z.boolean().default(policyDefaults.secondOpinion),
    vantage: z
      .object({
        spread: z.enum(vantageSpreads).default(policyDefaults.vantageSpread),
        count: z.number().int().min(1).max(maxVantageCount).default(policyDefaults.vantageCount),
        decision: z.enum(vantageDecisions).default(policyDefaults.vantageDecision),
      })
      .prefault({}),
  })
  .superRefine((spec, ctx) => {
    if (spec.readiness === undefined && spec.liveness === undefined && spec.startup === undefined) {
      ctx.addIssue({ code: 'custom', message: messages.noProbes, ...coded('no_probes') });
    }
  });

const metadataSchema = z.object({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.int().optional(),
  resourceVersion: z.string().optional(),
});

export const policySchema = z
  .object({
    apiVersion: z.literal('outprobe.io/v1alpha1').optional(),
    kind: z.literal('ProbePolicy').optional(),
    metadata: metadataSchema,
    spec: specSchema,
  })
  .superRefine((policy, ctx) => {
    const { readiness } = policy.spec;
    if (
      readiness !== undefined &&
      readiness.conditionType === undefined &&
      policy.metadata.name.length > policyLimits.policyNameForDefaultConditionType
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['spec', 'readiness', 'conditionType'],
        message: messages.defaultConditionType,
        ...coded('condition_type_invalid'),
      });
    }
  });

export type ParsedPolicy = z.output<typeof policySchema>;
