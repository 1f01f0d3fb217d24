{{/* fullname prefixes every object's name: the release name, or <release>-evalrun-operator. */}}
{{- define "evalrun-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "evalrun-operator.labels" -}}
app.kubernetes.io/name: evalrun-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "evalrun-operator.selectorLabels" -}}
app.kubernetes.io/name: evalrun-operator
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end -}}

{{- define "evalrun-operator.serviceAccountName" -}}
{{- printf "%s-controller-manager" (include "evalrun-operator.fullname" .) -}}
{{- end -}}

{{/* image renders repository:tag, or repository@digest when a digest is set; tag defaults to the chart's
appVersion. Called with (dict "image" <values> "root" $). */}}
{{- define "evalrun-operator.image" -}}
{{- if .image.digest -}}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
