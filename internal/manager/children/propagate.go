package children

import (
	"slices"
	"strings"
)

// The EvalRun's own metadata that its Job and pod inherit, so that what reads labels off Jobs and pods (Kueue's
// kueue.x-k8s.io/priority-class, cost allocation, policy engines) sees the run's. The operator's and the Job
// controller's keys always win: they are never taken from the EvalRun, and are set after the inherited ones.
//
// Labels: every label of the EvalRun except
//   - the operator's and the Job controller's: evals.evalrun.io/*, batch.kubernetes.io/*, job-name,
//     controller-uid;
//   - kueue.x-k8s.io/queue-name (Kueue's queue comes from spec.queueName only, which also suspends the Job);
//   - GitOps and Helm tracking labels: *argocd.argoproj.io/*, *fluxcd.io/* (kustomize.toolkit.fluxcd.io/name…),
//     *helm.sh/*.
//
// Annotations: every annotation of the EvalRun except
//   - kubectl.kubernetes.io/* (last-applied-configuration, restartedAt);
//   - GitOps and Helm tracking annotations: *argocd.argoproj.io/* (tracking-id, sync options), *fluxcd.io/*
//     (reconcile.fluxcd.io/requestedAt…), *helm.sh/* (meta.helm.sh/release-name…);
//   - the operator's, the Job controller's and Kueue's: *evals.evalrun.io/* (rerun, scheduled-time),
//     batch.kubernetes.io/*, *kueue.x-k8s.io/* (Kueue's Job settings belong in the spec and
//     spec.podTemplate.annotations);
//   - AppArmor's legacy container.apparmor.security.beta.kubernetes.io/* (allowed, validated, in
//     spec.podTemplate.annotations only).
//
// spec.podTemplate.labels and .annotations, which are the pod's own, win over the inherited ones on the pod.
// Both are copied when the Job is created; a later change of the EvalRun's metadata does not reach a Job that
// exists.
var (
	// droppedLabelDomains are the label key prefixes (a domain and its subdomains) never inherited.
	droppedLabelDomains = []string{"evals.evalrun.io", "batch.kubernetes.io", "argocd.argoproj.io", "fluxcd.io", "helm.sh"}
	// droppedLabelKeys are the label keys never inherited.
	droppedLabelKeys = []string{"job-name", "controller-uid", "kueue.x-k8s.io/queue-name"}
	// droppedAnnotationDomains are the annotation key prefixes (a domain and its subdomains) never inherited.
	droppedAnnotationDomains = []string{
		"kubectl.kubernetes.io", "argocd.argoproj.io", "fluxcd.io", "helm.sh",
		"evals.evalrun.io", "batch.kubernetes.io", "kueue.x-k8s.io",
		"container.apparmor.security.beta.kubernetes.io",
	}
)

// inheritedLabels returns the EvalRun's labels its Job and pod carry; nil for none.
func inheritedLabels(meta map[string]string) map[string]string {
	return inherit(meta, droppedLabelDomains, droppedLabelKeys)
}

// inheritedAnnotations returns the EvalRun's annotations its Job and pod carry; nil for none.
func inheritedAnnotations(meta map[string]string) map[string]string {
	return inherit(meta, droppedAnnotationDomains, nil)
}

func inherit(meta map[string]string, domains, keys []string) map[string]string {
	var out map[string]string
	for k, v := range meta {
		if dropped(k, domains, keys) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(meta))
		}
		out[k] = v
	}
	return out
}

// dropped reports whether key is one of keys, or its prefix is one of domains or a subdomain of one.
func dropped(key string, domains, keys []string) bool {
	if slices.Contains(keys, key) {
		return true
	}
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, d := range domains {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return true
		}
	}
	return false
}

// mergeMeta returns the union of layers, a later layer's value winning; nil when all are empty.
func mergeMeta(layers ...map[string]string) map[string]string {
	var out map[string]string
	for _, l := range layers {
		for k, v := range l {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
