package evalsource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// AnnotationEvalFileSHA256, on a pinned eval ConfigMap that holds only part of the eval file (a resumed run's
// cases left to run), is the sha256 of the whole file: the run's status.evalFileSHA256.
const AnnotationEvalFileSHA256 = "evals.evalrun.io/eval-file-sha256"

// ConfigMap builds the run's pinned eval ConfigMap: data (the file, or the part of it the run runs), whose whole
// file's sha256 is digest, run.json cfg, and the bundle's manifest (nil without a bundle).
func ConfigMap(run *evalsv1alpha1.EvalRun, data []byte, digest string, cfg podwire.RunConfig, manifest []byte) (*corev1.ConfigMap, error) {
	cm, err := children.BuildEvalConfigMap(run, data, cfg)
	if err != nil {
		return nil, err
	}
	cm.Annotations = map[string]string{AnnotationEvalFileSHA256: digest}
	if manifest != nil {
		cm.Data[podwire.BundleManifestKey] = string(manifest)
	}
	return cm, nil
}

// PinnedConfigMap reads the run's pinned eval ConfigMap from the API server (api, uncached); nil when it does not
// exist yet, a children.Error (ChildConflict) when another object holds its name.
func PinnedConfigMap(ctx context.Context, api client.Reader, run *evalsv1alpha1.EvalRun) (*corev1.ConfigMap, error) {
	name := children.NamesFor(run.Name).EvalConfigMap
	cm := &corev1.ConfigMap{}
	err := api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	if !metav1.IsControlledBy(cm, run) {
		return nil, children.NotControlled("ConfigMap", name, run)
	}
	return cm, nil
}

// PinnedFacts recovers the eval file's digest and what run.json says from the pinned ConfigMap when the status
// lost them (the rest of the facts are the status's).
func PinnedFacts(ctx context.Context, api client.Reader, run *evalsv1alpha1.EvalRun) (assess.StatusFacts, error) {
	facts := assess.StatusFactsFrom(run)
	cm, err := PinnedConfigMap(ctx, api, run)
	if err != nil || cm == nil {
		return facts, err
	}
	facts.EvalFileSHA256 = Digest(cm)
	facts.EvalConfigMapName = cm.Name
	if cfg, err := children.RunConfigFrom(cm); err == nil {
		facts.Resume = children.ResumeStatusOf(cfg.Resume)
		facts.EvalFileView = evalsv1alpha1.EvalFileView(cfg.EvalFileView)
		facts.BundleSHA256 = BundleDigest(cfg)
		facts.JudgeImage = assess.JudgeImageFacts(run, cfg)
	}
	return facts, nil
}

// Digest is the sha256 of the run's eval file: of the pinned copy cm, or, when the copy holds only the cases a
// resumed run runs, of the whole file (its annotation).
func Digest(cm *corev1.ConfigMap) string {
	if d := cm.Annotations[AnnotationEvalFileSHA256]; d != "" {
		return d
	}
	return children.EvalSHA256([]byte(cm.Data[podwire.EvalFileKey]))
}

// BundleDigest is the pinned bundle's digest in run.json ("" without a bundle).
func BundleDigest(cfg podwire.RunConfig) string {
	if cfg.Bundle == nil {
		return ""
	}
	return cfg.Bundle.SHA256
}
