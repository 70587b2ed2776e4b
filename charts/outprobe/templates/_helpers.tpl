{{/* Chart name, overridable with nameOverride. */}}
{{- define "outprobe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: fullnameOverride, else <release>-<name> (or <release> when it already contains the name). */}}
{{- define "outprobe.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart label value: <name>-<version>. */}}
{{- define "outprobe.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels (immutable on the Deployment: never add to these). */}}
{{- define "outprobe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "outprobe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Standard labels on every object. */}}
{{- define "outprobe.labels" -}}
helm.sh/chart: {{ include "outprobe.chart" . }}
{{ include "outprobe.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: outprobe
{{- end }}

{{/* The ServiceAccount the controller runs as. */}}
{{- define "outprobe.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "outprobe.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Image reference: repository@digest, else repository:tag (tag defaults to appVersion). */}}
{{- define "outprobe.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Controller arguments from values (every flag also has an OUTPROBE_* env var; flags are used here). */}}
{{- define "outprobe.args" -}}
{{- $c := .Values.config -}}
- --metrics-addr=0.0.0.0:{{ .Values.metrics.port }}
- --metrics-auth={{ .Values.metrics.auth }}
{{- if include "outprobe.metricsTls" . }}
- --metrics-cert-dir=/etc/outprobe/metrics-tls
- --metrics-tls-min-version={{ .Values.metrics.tls.minVersion }}
{{- end }}
- --log-level={{ $c.logLevel }}
- --concurrency={{ $c.concurrency }}
- --max-probe-timeout={{ $c.maxProbeTimeoutSeconds }}
- --stall-bound={{ $c.stallBoundSeconds }}
- --kube-api-qps={{ $c.kubeApiQps }}
- --kube-api-burst={{ $c.kubeApiBurst }}
- --status-interval={{ $c.statusIntervalSeconds }}
- --sharding={{ $c.sharding }}
- --lease-namespace={{ .Release.Namespace }}
- --lease-duration={{ $c.leaseDurationSeconds }}
- --lease-renew-interval={{ $c.leaseRenewIntervalSeconds }}
- --peer-addr=0.0.0.0:{{ .Values.peer.port }}
- --peer-token-file=/var/run/secrets/outprobe.io/peer/token
- --peer-pod-selector=app.kubernetes.io/name={{ include "outprobe.name" . }},app.kubernetes.io/instance={{ .Release.Name }}
{{- with include "outprobe.watchNamespaces" . }}
- --namespace={{ . }}
{{- end }}
{{- if $c.allowedProbeCidrs }}
- --allowed-probe-cidrs={{ join "," $c.allowedProbeCidrs }}
{{- end }}
{{- if $c.kubeProbeVersion }}
- --kube-probe-version={{ $c.kubeProbeVersion }}
{{- end }}
{{- if .Values.execProbes.enabled }}
{{- if not .Values.execProbes.namespaces }}
{{- fail "execProbes.enabled needs execProbes.namespaces: the namespaces whose ProbePolicies may use exec probes, or [\"*\"] for all" }}
{{- end }}
- --enable-exec-probes
- --exec-namespaces={{ join "," .Values.execProbes.namespaces }}
{{- end }}
{{- if .Values.execProbes.publishOutput }}
- --publish-exec-output
{{- end }}
- --max-remediations-per-minute={{ .Values.remediation.maxPerMinute }}
- --max-halt-above-percent-failing={{ .Values.remediation.maxHaltAbovePercentFailing }}
{{- if .Values.remediation.allowDelete }}
- --allow-delete-action
{{- end }}
{{- if .Values.webhook.enabled }}
- --webhook-addr=0.0.0.0:{{ .Values.webhook.port }}
- --webhook-service={{ include "outprobe.fullname" . }}-webhook
{{- if ne (include "outprobe.webhookCerts" .) "controller" }}
- --webhook-cert-dir=/etc/outprobe/webhook-tls
{{- else }}
- --webhook-secret={{ include "outprobe.fullname" . }}-webhook-tls
- --webhook-configuration={{ include "outprobe.fullname" . }}
{{- end }}
{{- else }}
- --webhook-addr=off
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/* The namespaces the controller watches and acts in, comma-joined: config.namespaces plus config.watchNamespace; empty means all. */}}
{{- define "outprobe.watchNamespaces" -}}
{{- $nss := concat (.Values.config.namespaces | default list) (list .Values.config.watchNamespace) | compact | uniq -}}
{{- join "," $nss -}}
{{- end }}

{{/* The controller's rules: in a ClusterRole, or in a Role per watched namespace. */}}
{{- define "outprobe.controllerRules" -}}
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"{{ if .Values.remediation.allowDelete }}, "delete"{{ end }}]
- apiGroups: [""]
  resources: ["pods/status"]
  verbs: ["patch"]
- apiGroups: [""]
  resources: ["pods/eviction"]
  verbs: ["create"]
{{- if and .Values.execProbes.enabled (has "*" .Values.execProbes.namespaces) }}
- apiGroups: [""]
  resources: ["pods/exec"]
  verbs: ["create"]
{{- end }}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: ["outprobe.io"]
  resources: ["probepolicies"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["outprobe.io"]
  resources: ["probepolicies/status"]
  verbs: ["get", "patch", "update"]
{{- end }}

{{/*
Where the webhook's serving certificate comes from: "cert-manager" (webhook.certManager.enabled),
"existing" (webhook.certificate.existingSecret: brought by the user, caBundle from values), or
"controller" (the controller creates, rotates and patches it).
*/}}
{{- define "outprobe.webhookCerts" -}}
{{- $existing := .Values.webhook.certificate.existingSecret | default "" -}}
{{- if and .Values.webhook.certManager.enabled $existing -}}
{{- fail "webhook.certManager.enabled and webhook.certificate.existingSecret exclude each other: pick one source of the webhook's certificate" -}}
{{- else if .Values.webhook.certManager.enabled -}}
cert-manager
{{- else if $existing -}}
{{- if not .Values.webhook.certificate.caBundle -}}
{{- fail "webhook.certificate.existingSecret needs webhook.certificate.caBundle: the base64 PEM of the CA that signed the Secret's tls.crt" -}}
{{- end -}}
existing
{{- else -}}
controller
{{- end -}}
{{- end }}

{{/* The Secret the webhook's certificate is read from (cert-manager's or the user's). */}}
{{- define "outprobe.webhookSecretName" -}}
{{- if eq (include "outprobe.webhookCerts" .) "existing" -}}
{{ .Values.webhook.certificate.existingSecret }}
{{- else -}}
{{ include "outprobe.fullname" . }}-webhook-tls
{{- end -}}
{{- end }}

{{/*
The scrape endpoint shared by the ServiceMonitor and the PodMonitor (ADR 0062): /metrics on
the metrics port (https, verified for the certificate's name against its CA, with metrics.tls;
ADR 0068), the series' own labels kept (honorLabels: a per-policy series' `namespace`
is the policy's, not the controller's), and with metrics.auth=kubernetes a bearer token from a
Secret through `authorization` (bearerTokenFile is deprecated by the Prometheus Operator):
metrics.serviceMonitor.bearerTokenSecret, or the token of the chart's scraper ServiceAccount.
*/}}
{{- define "outprobe.scrapeEndpoint" -}}
{{- $m := .monitor -}}
{{- $ctx := .ctx -}}
port: metrics
path: /metrics
interval: {{ $m.interval }}
scrapeTimeout: {{ $m.scrapeTimeout }}
honorLabels: {{ $m.honorLabels }}
{{- if include "outprobe.metricsTls" $ctx }}
scheme: https
tlsConfig:
  serverName: {{ include "outprobe.metricsServerName" $ctx }}
  ca:
    {{- include "outprobe.metricsCa" $ctx | nindent 4 }}
{{- end }}
{{- if eq $ctx.Values.metrics.auth "kubernetes" }}
authorization:
  type: Bearer
  credentials:
    name: {{ include "outprobe.scrapeTokenSecret" $ctx }}
    key: {{ if $ctx.Values.metrics.serviceMonitor.bearerTokenSecret.name }}{{ $ctx.Values.metrics.serviceMonitor.bearerTokenSecret.key }}{{ else }}token{{ end }}
{{- end }}
{{- with $m.relabelings }}
relabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $m.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The Secret whose token the ServiceMonitor or PodMonitor sends. */}}
{{- define "outprobe.scrapeTokenSecret" -}}
{{- .Values.metrics.serviceMonitor.bearerTokenSecret.name | default (printf "%s-scraper-token" (include "outprobe.fullname" .)) -}}
{{- end }}

{{/* Whether the chart makes the scraper ServiceAccount and its token Secret. */}}
{{- define "outprobe.scraperToken" -}}
{{- if and (eq .Values.metrics.auth "kubernetes") (or .Values.metrics.serviceMonitor.enabled .Values.metrics.podMonitor.enabled) (not .Values.metrics.serviceMonitor.bearerTokenSecret.name) -}}
true
{{- end -}}
{{- end }}

{{/*
Where the metrics port's certificate comes from (ADR 0068): "" (metrics.tls off: plain HTTP),
"cert-manager" (metrics.tls.certManager.enabled) or "existing" (metrics.tls.existingSecret).
*/}}
{{- define "outprobe.metricsTls" -}}
{{- $t := .Values.metrics.tls -}}
{{- if $t.enabled -}}
{{- if and $t.certManager.enabled $t.existingSecret -}}
{{- fail "metrics.tls.certManager.enabled and metrics.tls.existingSecret exclude each other: pick one source of the metrics certificate" -}}
{{- else if $t.certManager.enabled -}}
cert-manager
{{- else if $t.existingSecret -}}
existing
{{- else -}}
{{- fail "metrics.tls.enabled needs a certificate: metrics.tls.certManager.enabled=true, or metrics.tls.existingSecret (a kubernetes.io/tls Secret in the release namespace)" -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* The Secret the metrics port's certificate is read from (cert-manager's or the user's). */}}
{{- define "outprobe.metricsTlsSecret" -}}
{{- .Values.metrics.tls.existingSecret | default (printf "%s-metrics-tls" (include "outprobe.fullname" .)) -}}
{{- end }}

{{/* The DNS name scrapers verify the metrics certificate for. */}}
{{- define "outprobe.metricsServerName" -}}
{{- .Values.metrics.tls.serverName | default (printf "%s-metrics.%s.svc" (include "outprobe.fullname" .) .Release.Namespace) -}}
{{- end }}

{{/* The CA scrapers trust (a SecretOrConfigMap): metrics.tls.ca, else ca.crt of the serving Secret. */}}
{{- define "outprobe.metricsCa" -}}
{{- if .Values.metrics.tls.ca -}}
{{- toYaml .Values.metrics.tls.ca -}}
{{- else -}}
secret:
  name: {{ include "outprobe.metricsTlsSecret" . }}
  key: ca.crt
{{- end -}}
{{- end }}
