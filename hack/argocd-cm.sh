#!/usr/bin/env bash
# Writes config/gitops/argocd/argocd-cm.yaml, the argocd-cm patch that carries config/gitops/argocd/health.lua as
# Argo CD's health check for EvalRun and config/gitops/argocd/schedule-health.lua as its health check for
# EvalSchedule. `make gitops` runs it; `make verify` fails when the file is stale, and so does test/gitops.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=config/gitops/argocd
{
  cat <<'YAML'
# Generated from health.lua and schedule-health.lua by hack/argocd-cm.sh (make gitops): edit those, not this file.
# Argo CD's health checks for EvalRun and EvalSchedule, as a patch of the argocd-cm ConfigMap in Argo CD's namespace:
#   kubectl -n argocd patch configmap argocd-cm --patch-file config/gitops/argocd/argocd-cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
data:
  resource.customizations.health.evals.evalrun.io_EvalRun: |
YAML
  sed -e 's/^/    /' -e 's/^ *$//' "${dir}/health.lua"
  echo "  resource.customizations.health.evals.evalrun.io_EvalSchedule: |"
  sed -e 's/^/    /' -e 's/^ *$//' "${dir}/schedule-health.lua"
} >"${dir}/argocd-cm.yaml"
