{{/*
Helpers of the PrometheusRule, each called with (list $ "AlertName" default):
monitoring.alerts.disabled drops an alert, monitoring.alerts.overrides
changes its for, severity and labels, and monitoring.alerts.additionalLabels
go on every alert.
*/}}

{{/* alertEnabled is "true" unless monitoring.alerts.disabled names the alert. */}}
{{- define "address-controller.alertEnabled" -}}
{{- if not (has (index . 1) ((index . 0).Values.monitoring.alerts.disabled | default list)) }}true{{ end -}}
{{- end }}

{{/* alertFor is the alert's for: its override's, else the default given. */}}
{{- define "address-controller.alertFor" -}}
{{- $override := get ((index . 0).Values.monitoring.alerts.overrides | default dict) (index . 1) | default dict -}}
{{- $override.for | default (index . 2) -}}
{{- end }}

{{/*
alertLabels are the alert's labels: its severity (the override's, else the
default given), then its override's labels, then additionalLabels; the first
to set a label wins.
*/}}
{{- define "address-controller.alertLabels" -}}
{{- $alerts := (index . 0).Values.monitoring.alerts -}}
{{- $override := get ($alerts.overrides | default dict) (index . 1) | default dict -}}
{{- toYaml (merge (dict "severity" ($override.severity | default (index . 2))) ($override.labels | default dict) ($alerts.additionalLabels | default dict)) -}}
{{- end }}
