{{/*
The manager pod's affinity: the affinity value, plus, unless that already
sets podAntiAffinity, the rule podAntiAffinity asks for (replicas on distinct
nodes: "soft" prefers it, "hard" requires it).
*/}}
{{- define "cilium-iad.affinity" -}}
{{- $affinity := deepCopy (.Values.affinity | default dict) }}
{{- $mode := .Values.podAntiAffinity | default "" }}
{{- if and $mode (not (hasKey $affinity "podAntiAffinity")) }}
{{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "cilium-iad.selectorLabels" . | fromYaml)) }}
{{- if eq $mode "hard" }}
{{- $_ := set $affinity "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) }}
{{- else }}
{{- $_ := set $affinity "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) }}
{{- end }}
{{- end }}
{{- if $affinity }}
{{- toYaml $affinity }}
{{- end }}
{{- end }}

{{/*
The topology spread constraints, each selecting this chart's pods unless it
names its own labelSelector.
*/}}
{{- define "cilium-iad.topologySpreadConstraints" -}}
{{- $out := list }}
{{- range .Values.topologySpreadConstraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" (include "cilium-iad.selectorLabels" $ | fromYaml)) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- if $out }}
{{- toYaml $out }}
{{- end }}
{{- end }}
