import { conditionTypePrefix, livenessActions, maxVantageCount, panicExitMarginPercent, policyDefaults, policyModes, selectorOperators, vantageDecisions, vantageSpreads } from './defaults.ts';
import { celRegex, int32, int64, obj, probeSchema, str, withRules } from './crd-probe.ts';
import type { CelRule, JsonSchema } from './crd-probe.ts';
import { maxPrefixLength, messages, patterns, reservedConditionTypes } from './rules.ts';
import { policyLimits } from './schema.ts';

/**
 * The ProbePolicy CustomResourceDefinition as plain data. `crds/
 * outprobe.io_probepolicies.yaml` is this object as YAML; a unit test keeps
 * the two equal (UPDATE_CRD=1 rewrites the file).
 */

const containerSchema = withRules(
  str(
    "Name of the container the probe follows: its start time and restarts, and the ports that named ports are resolved against. Default: the pod's first regular container (spec.containers, not a sidecar).",
    { maxLength: policyLimits.containerNameLength },
  ),
  [{ rule: `self.matches(${celRegex(patterns.dnsLabel)})`, message: messages.container }],
);

const conditionTypeSchema = withRules(
  str(
    `Pod condition type outprobe writes with the readiness result, and that pods list in spec.readinessGates. A qualified name: an optional DNS subdomain prefix and "/", then a name. Default: ${conditionTypePrefix}<policy name> (applied by the controller, not by the API server).`,
    { maxLength: policyLimits.qualifiedNameLength },
  ),
  [
    { rule: `self.matches(${celRegex(patterns.qualifiedName)})`, message: messages.conditionType },
    { rule: `!self.contains('/') || self.indexOf('/') <= ${maxPrefixLength}`, message: messages.conditionTypePrefix },
    {
      rule: `!(self in [${reservedConditionTypes.map((t) => `'${t}'`).join(', ')}])`,
      message: messages.conditionTypeReserved,
    },
  ],
);

const successThresholdRule = (message: string): CelRule => ({
  rule: '!has(self.probe.successThreshold) || self.probe.successThreshold == 1',
  message,
  fieldPath: '.probe.successThreshold',
  reason: 'FieldValueInvalid',
});

const readinessSchema = withRules(
  obj(
    'Readiness: outprobe probes the selected pods and writes the result as the pod condition conditionType (True or False). Pods that list it in spec.readinessGates are Ready only when it is True. In Observe mode nothing is written. The chart\'s admission policy accepts readiness in Enforce mode only from a user who may patch pods/status in this namespace.',
    {
      conditionType: conditionTypeSchema,
      container: containerSchema,
      probe: probeSchema('readiness'),
      maxUnreadyPercent: int32(
        `Panic threshold: outprobe never holds more than this percentage (rounded down) of the policy's gated pods (selected pods that list conditionType in spec.readinessGates) at False. When one more False would exceed it, outprobe fails open: it writes True with reason PanicFailOpen and reports ReadinessPanic in the policy's conditions, because so many failures at once more likely mean outprobe's own network or a shared dependency than bad pods (like a load balancer's panic mode). Panic ends when the failing share falls to this value minus ${panicExitMarginPercent} points. With several replicas each keeps its own share of the pods within it. 0 never writes False; 100 disables the guard.`,
        { default: policyDefaults.maxUnreadyPercent, minimum: 0, maximum: 100 },
      ),
      injectGate: {
        type: 'boolean',
        default: policyDefaults.injectGate,
        description:
          'Gate injection: when true, outprobe\'s admission webhook adds conditionType to spec.readinessGates of every new pod this policy selects (Enforce mode only), even in a namespace without the label outprobe.io/inject-readiness-gates=enabled (with the label, every Enforce-mode policy with a readiness probe is injected). Existing pods are not changed; recreate them (e.g. roll the Deployment) to gate them. Needs the webhook installed (chart value webhook.enabled), and, through the chart\'s admission policy, an author who may patch pods/status in this namespace.',
      },
    },
    { required: ['probe'] },
  ),
  [
    {
      rule: '!has(self.probe.terminationGracePeriodSeconds)',
      message: messages.gracePeriodReadiness,
      fieldPath: '.probe.terminationGracePeriodSeconds',
      reason: 'FieldValueForbidden',
    },
  ],
);

const livenessSchema = withRules(
  obj(
    'Liveness: when the probe fails failureThreshold times in a row, outprobe remediates the whole pod (it cannot restart one container), within the remediation budget. In Observe mode it only reports what it would do.',
    {
      action: str(
        'Evict: an Eviction, which honours PodDisruptionBudgets. Delete: a plain delete, honoured only when the installer allows it (--allow-delete-action; otherwise the pod is evicted). Also used for startup probe failures. The chart\'s admission policy accepts a liveness or startup probe in Enforce mode only from a user who may create pods/eviction (Evict) or delete pods (Delete) in this namespace.',
        { enum: [...livenessActions], default: policyDefaults.livenessAction },
      ),
      container: containerSchema,
      probe: probeSchema('liveness'),
    },
    { required: ['probe'] },
  ),
  [successThresholdRule(messages.successThresholdOne)],
);

const startupSchema = withRules(
  obj(
    "Startup: liveness and readiness probes of the container wait until this probe succeeds once; failing it failureThreshold times remediates the pod like a liveness failure (with liveness.action, default Evict).",
    { container: containerSchema, probe: probeSchema('startup') },
    { required: ['probe'] },
  ),
  [successThresholdRule(messages.successThresholdOne)],
);

const remediationSchema = obj(
  'Budget for liveness and startup remediation (Enforce mode).',
  {
    maxUnavailable: withRules(
      {
        'x-kubernetes-int-or-string': true,
        default: policyDefaults.maxUnavailable,
        description:
          'Most pods of this policy that may be being remediated or not ready at once: a count (0 disables remediation) or a percentage of the selected pods ("25%", rounded down, but at least 1 when above 0%).',
      },
      [{ rule: `type(self) == int ? self >= 0 : self.matches(${celRegex(patterns.percent)})`, message: messages.maxUnavailable }],
    ),
    haltAbovePercentFailing: int32(
      'When more than this percentage of the selected pods fail liveness or startup at the same time, outprobe suspects a shared cause (its own network, a common dependency) and halts remediation, reporting it in the RemediationHalted condition. 100 never halts. The installer\'s ceiling (--max-halt-above-percent-failing, default 50) applies when this asks for more.',
      { default: policyDefaults.haltAbovePercentFailing, minimum: 0, maximum: 100 },
    ),
  },
  { default: {} },
);

const vantageSchema = obj(
  "Where the verdicts on the selected pods come from (ADR 0040). outprobe's replicas publish their node (from their pod) and its zone; the replica that probes a pod is chosen by rendezvous hashing over the replicas eligible for it only.",
  {
    spread: withRules(
      str(
        "node (default): never probe a pod from its own node; zone: from a replica in another zone where one is known, else from another node; any: from any replica, the pod's own node included (the kubelet's blind spot). A pod no eligible replica can probe (one replica, or every replica on its node) is not probed: it is counted in the Degraded condition (reason NoVantage), gets a NoVantage Event, and its readiness condition is kept True (fail open). The second opinion asks only eligible replicas.",
        { enum: [...vantageSpreads], default: policyDefaults.vantageSpread },
      ),
      [{ rule: `self in [${vantageSpreads.map((s) => `'${s}'`).join(', ')}]`, message: 'vantage.spread must be node, zone or any' }],
    ),
    count: withRules(
      int32(
        `How many replicas probe each selected pod, each from its own vantage under spread and each with the kubelet's state machine on its own probes (1 to ${maxVantageCount}, ADR 0058). The first eligible replica writes the gate from the combined verdict; the others report theirs to it over the peer channel. With fewer eligible replicas than count, the verdict is taken from those there are (count 2 with one eligible replica is count 1).`,
        { default: policyDefaults.vantageCount, minimum: 1, maximum: maxVantageCount },
      ),
      [{ rule: `self >= 1 && self <= ${maxVantageCount}`, message: `vantage.count must be 1 to ${maxVantageCount}` }],
    ),
    decision: withRules(
      str(
        "How the vantages' verdicts make the readiness gate when count > 1: quorum (default): False only when a majority of the pod's vantages have crossed failureThreshold (with count 2, both); all: False only when every vantage fails; any: False when any vantage fails. A vantage that has reported nothing lately abstains.",
        { enum: [...vantageDecisions], default: policyDefaults.vantageDecision },
      ),
      [{ rule: `self in [${vantageDecisions.map((s) => `'${s}'`).join(', ')}]`, message: 'vantage.decision must be quorum, all or any' }],
    ),
  },
  { default: {} },
);

const selectorSchema = obj(
  "Label selector for the pods in the policy's namespace. Required; {} selects every pod in the namespace.",
  {
    // Checking every key's syntax does not fit the CEL cost budget (map keys
    // have no maxLength); the controller does it. __proto__ is refused here
    // too: some JSON-to-object code drops it, turning the selector into {}.
    matchLabels: withRules(
      {
        type: 'object',
        description: 'Labels a pod must have, each with exactly this value. Keys are label keys (qualified names).',
        additionalProperties: { type: 'string', maxLength: policyLimits.labelValueLength },
      },
      [{ rule: "!('__proto__' in self)", message: messages.labelKey }],
    ),
    matchExpressions: {
      type: 'array',
      description: 'Requirements a pod must meet, all of them.',
      maxItems: policyLimits.matchExpressions,
      'x-kubernetes-list-type': 'atomic',
      items: withRules(
        obj(
          'One requirement on a label.',
          {
            key: withRules(str('Label key (a qualified name).', { maxLength: policyLimits.qualifiedNameLength }), [
              { rule: `self.matches(${celRegex(patterns.qualifiedName)}) && (!self.contains('/') || self.indexOf('/') <= ${maxPrefixLength})`, message: messages.labelKey },
            ]),
            operator: str('In, NotIn, Exists or DoesNotExist.', { enum: [...selectorOperators] }),
            values: {
              type: 'array',
              description: 'Label values: non-empty for In and NotIn, empty for Exists and DoesNotExist.',
              maxItems: policyLimits.selectorValues,
              'x-kubernetes-list-type': 'atomic',
              items: str('A label value.', { maxLength: policyLimits.labelValueLength }),
            },
          },
          { required: ['key', 'operator'] },
        ),
        [
          {
            rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
            message: messages.selectorValues,
            fieldPath: '.values',
          },
        ],
      ),
    },
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

const specSchema = withRules(
  obj(
    'Which pods to probe, how, and what to do with the results.',
    {
      selector: selectorSchema,
      mode: str(
        'Enforce writes readiness conditions and remediates; Observe writes nothing to pods and reports, in Events and metrics, what it would have done.',
        { enum: [...policyModes], default: policyDefaults.mode },
      ),
      readiness: readinessSchema,
      liveness: livenessSchema,
      startup: startupSchema,
      remediation: remediationSchema,
      vantage: vantageSchema,
      secondOpinion: {
        type: 'boolean',
        default: policyDefaults.secondOpinion,
        description:
          "Second opinion: before the first False of a pod's readiness condition and before any eviction or delete, the replica that probes the pod asks the next live replica (in the pod's rendezvous order) to probe the same target once from its own node, and acts only if that probe fails too. If it succeeds there, nothing is written and the pod gets a SecondOpinionDisagreed Warning Event; if no answer comes, the action waits (fail open). Adds about one probe timeout before the first False. Does nothing with one replica.",
      },
    },
    { required: ['selector'] },
  ),
  [{ rule: 'has(self.readiness) || has(self.liveness) || has(self.startup)', message: messages.noProbes }],
);

const conditionSchema = obj(
  'A condition of the policy (metav1.Condition).',
  {
    type: str('Condition type: Ready, Degraded, RemediationHalted, ReadinessPanic or Invalid.', {
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    observedGeneration: int64('The .metadata.generation the condition was set from.', { minimum: 0 }),
    lastTransitionTime: str('When the status last changed.', { format: 'date-time' }),
    reason: str('Machine-readable CamelCase reason for the last transition.', {
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: str('Human-readable details of the last transition.', { maxLength: 32768 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

const count = (description: string): JsonSchema => int32(description, { minimum: 0 });

const statusSchema = obj('What the controller observes; written by outprobe only.', {
  observedGeneration: int64('The .metadata.generation this status was computed from.', { minimum: 0 }),
  pods: count('Pods the selector selects.'),
  ready: count('Selected pods whose readiness condition is True.'),
  failing: count('Selected pods whose liveness or startup probe is at failure.'),
  ungated: count('Selected pods that do not list the readiness condition in spec.readinessGates (probed and counted, never written).'),
  diverged: count(
    "Selected pods whose readiness the node and outprobe see differently, both views confirmed and stable for a probe period: ContainersReady True (the kubelet, probing from the pod's own node) while outprobe's readiness probe fails from another node, or the reverse. Each such pod gets a ReachabilityDiverged Warning Event. Counted in Observe mode too.",
  ),
  noVantage: count(
    "Selected pods that no replica may probe under spec.vantage.spread (one replica, or every replica on the pod's node): they are not probed and their readiness condition is kept True (reason NoVantage). Also counted in the Degraded condition.",
  ),
  remediations: int64('Remediations (evictions or deletions) taken since the policy was created.', { minimum: 0 }),
  message: str('One-line summary, shown by kubectl get -o wide.', { maxLength: 32768 }),
  conditions: {
    type: 'array',
    description: 'Ready, Degraded, RemediationHalted, ReadinessPanic and Invalid.',
    maxItems: 16,
    items: conditionSchema,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  },
});

const rootSchema = withRules(
  obj(
    'ProbePolicy runs readiness, liveness and startup probes against selected pods from outside their node, writes the readiness result as a pod condition for readiness gates, and evicts or deletes pods that fail liveness, within a budget.',
    {
      apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
      kind: str('Kind is a string value representing the REST resource this object represents.'),
      // The API server forbids anything but `type` on metadata (no description).
      metadata: { type: 'object' },
      spec: specSchema,
      status: statusSchema,
    },
    { required: ['spec'] },
  ),
  [
    {
      rule: `!has(self.spec.readiness) || has(self.spec.readiness.conditionType) || size(self.metadata.name) <= ${policyLimits.policyNameForDefaultConditionType}`,
      message: messages.defaultConditionType,
      fieldPath: '.spec.readiness',
    },
  ],
);

const column = (name: string, type: string, jsonPath: string, description: string, priority = 0): JsonSchema => ({
  name,
  type,
  jsonPath,
  description,
  ...(priority === 0 ? {} : { priority }),
});

/** The CustomResourceDefinition `probepolicies.outprobe.io`. */
export function probePolicyCrd(): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'probepolicies.outprobe.io', labels: { 'app.kubernetes.io/name': 'outprobe' } },
    spec: {
      group: 'outprobe.io',
      names: {
        kind: 'ProbePolicy',
        listKind: 'ProbePolicyList',
        plural: 'probepolicies',
        singular: 'probepolicy',
        shortNames: ['pp'],
        categories: ['outprobe'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            column('Status', 'string', '.status.conditions[?(@.type=="Ready")].reason', 'Why the policy is or is not applied: Probing, Syncing, InvalidSpec, ConditionTypeConflict (the Ready condition\'s reason).'),
            column('Mode', 'string', '.spec.mode', 'Enforce or Observe.'),
            column('Pods', 'integer', '.status.pods', 'Pods the selector selects.'),
            column('Pods-Ready', 'integer', '.status.ready', 'Of those, how many have the policy\'s readiness condition True (a count, not a condition).'),
            column('Pods-Failing', 'integer', '.status.failing', 'Of those, how many fail liveness or startup now.'),
            column('Diverged', 'integer', '.status.diverged', "Selected pods the node calls ready and outprobe cannot reach, or the reverse."),
            column('NoVantage', 'integer', '.status.noVantage', "Selected pods no replica may probe from outside their node (not probed, kept ready)."),
            column('Remediated', 'integer', '.status.remediations', 'Evictions or deletions taken so far.'),
            column('Age', 'date', '.metadata.creationTimestamp', 'Time since the policy was created.'),
            column('Message', 'string', '.status.message', 'Summary of the policy state; for a policy that is not applied, why.'),
          ],
          schema: { openAPIV3Schema: rootSchema },
        },
      ],
    },
  };
}
