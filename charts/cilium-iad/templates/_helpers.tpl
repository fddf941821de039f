{{/*
Names and labels shared by every template of the chart.

The chart installs cluster-scoped objects (ClusterRoleBindings, an admission
policy) and binds the generated ClusterRole cilium-iad-manager, so it is
installed once per cluster: names come from the chart, not the release.
*/}}

{{/* fullname names every object of the chart; fullnameOverride replaces it. */}}
{{- define "cilium-iad.fullname" -}}
{{- default .Chart.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* chart is the helm.sh/chart label: name and version. */}}
{{- define "cilium-iad.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* selectorLabels select the manager's pods; they never change on upgrade. */}}
{{- define "cilium-iad.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* labels go on every object the chart writes. */}}
{{- define "cilium-iad.labels" -}}
helm.sh/chart: {{ include "cilium-iad.chart" . }}
{{ include "cilium-iad.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* serviceAccountName is the identity the manager runs as. */}}
{{- define "cilium-iad.serviceAccountName" -}}
{{- include "cilium-iad.fullname" . -}}
{{- end -}}

{{/* image is the manager's image reference; the tag defaults to appVersion. */}}
{{- define "cilium-iad.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* serviceAccountUsername is the user name the API server sees the driver as. */}}
{{- define "cilium-iad.serviceAccountUsername" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "cilium-iad.serviceAccountName" .) -}}
{{- end -}}

{{/* placeholderNamespace holds the placeholder Services; empty means the release namespace. */}}
{{- define "cilium-iad.placeholderNamespace" -}}
{{- .Values.placeholderNamespace | default .Release.Namespace -}}
{{- end -}}

{{/*
metricsTLSConfig is how Prometheus checks the metrics endpoint's certificate:
against the CA of metricsCertSecret when one is mounted, not at all when the
manager serves its self-signed certificate.
*/}}
{{- define "cilium-iad.metricsTLSConfig" -}}
{{- if .Values.metricsCertSecret -}}
ca:
  secret:
    name: {{ .Values.metricsCertSecret }}
    key: ca.crt
serverName: {{ printf "%s-metrics.%s.svc" (include "cilium-iad.fullname" .) .Release.Namespace }}
{{- else -}}
insecureSkipVerify: true
{{- end -}}
{{- end -}}
