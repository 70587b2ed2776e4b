/**
 * The policy stage: ProbePolicy types, a zod schema that matches the CRD,
 * defaulting (including `conditionType` = `outprobe.io/<name>`) and the
 * validation the CRD cannot express. Pure: no I/O, no clock.
 */
export {
  conditionTypePrefix,
  containerProbeFields,
  defaultConditionType,
  handlerDefaults,
  httpSchemes,
  livenessActions,
  panicExitMarginPercent,
  policyDefaults,
  policyModes,
  probeDefaults,
  probeTimingFields,
  maxVantageCount,
  selectorOperators,
  vantageDecisions,
  vantageSpreads,
} from './defaults.ts';
export type { ContainerProbeField, HttpScheme, LivenessAction, PolicyMode, ProbeTimingField, SelectorOperator, VantageDecision, VantageSpread } from './defaults.ts';
export { isContainerProbeRef, resolveContainerProbe } from './from-container.ts';
export type { ContainerProbeProblem, ContainerProbeResolution } from './from-container.ts';
export { formatIssue, policyIssueCodes } from './issues.ts';
export type { PolicyIssue, PolicyIssueCode } from './issues.ts';
export { policySchema } from './schema.ts';
export { capProbeTimeouts, defaultMaxProbeTimeoutSeconds } from './timeout-cap.ts';
export type { CappedTimeout } from './timeout-cap.ts';
export { probeTiming, thresholdsOf } from './timing.ts';
export type { ProbeTiming } from './timing.ts';
export type {
  ContainerProbeRef,
  HttpHeader,
  LabelSelector,
  LabelSelectorRequirement,
  LivenessSpec,
  PolicyMetadata,
  PolicyProbe,
  PortRef,
  ProbeHandler,
  ProbeHandlerType,
  ProbePolicy,
  ProbePolicySpec,
  ProbeSpec,
  ReadinessSpec,
  RemediationSpec,
  StartupSpec,
  VantageSpec,
} from './types.ts';
export { probeOf, validatePolicy } from './validate.ts';
export type { ValidateOptions, ValidationResult } from './validate.ts';
