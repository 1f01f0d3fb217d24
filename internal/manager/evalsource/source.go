package evalsource

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
)

// Waiting for a missing eval-file source: the delay grows with the time already waited, within these bounds.
const (
	minSourceWait = 2 * time.Second
	maxSourceWait = time.Minute
)

// Recheck is the delay before looking for a missing source (an eval file, a run to resume or judge again) once
// more after waiting for waited.
func Recheck(waited time.Duration) time.Duration {
	return min(max(waited/2, minSourceWait), maxSourceWait)
}

// Reader reads runs' eval files from their sources.
type Reader struct {
	// api reads uncached: a source ConfigMap is the user's, never in the manager's cache.
	api    client.Reader
	bounds bucketpool.Bounds
}

// NewReader returns a Reader: api reads uncached from the API server; bounds bounds each bucket call.
func NewReader(api client.Reader, bounds bucketpool.Bounds) *Reader {
	return &Reader{api: api, bounds: bounds}
}

// Found is what reading a run's eval file found: the valid file and the bundle read with it (nil without one);
// or Invalid, why the file can never be used (the run ends InvalidEvalFile); or Missing, what is not there yet
// (its ConfigMap, key, Secret or object: the run waits).
type Found struct {
	File    File
	Bundle  *Bundle
	Invalid string
	Missing string
}

// Read reads and validates the run's eval file: a bucket object streamed through its sha256 check and
// evalfile.Scan, never held whole (scanObject); a bundle's eval file (readBundle: at most evalfile.MaxWholeBytes,
// the bundle read with it); or the inline text or ConfigMap key (at most 1 MiB), parsed whole. An object or bundle
// that is there but not what the spec names is Invalid. An error is what a retry may heal: the API server failing,
// or a bucket that failed or did not answer in time (a bucketpool.CallError).
func (r *Reader) Read(ctx context.Context, run *evalsv1alpha1.EvalRun) (Found, error) {
	f, err := r.readAnyFormat(ctx, run)
	if errors.Is(err, errInvalidObject) || errors.Is(err, errInvalidBundle) {
		return Found{Invalid: assess.OneLine(err.Error())}, nil
	}
	return f, err
}

// readAnyFormat is Read before an object's or a bundle's invalidity is told apart from an error.
func (r *Reader) readAnyFormat(ctx context.Context, run *evalsv1alpha1.EvalRun) (Found, error) {
	if run.Spec.EvalFile.S3 != nil {
		return r.scanObject(ctx, run)
	}
	var data []byte
	var pb *Bundle
	var missing string
	var err error
	if run.Spec.EvalFile.Bundle != nil {
		if pb, missing, err = r.readBundle(ctx, run); pb != nil {
			data = pb.evalData
		}
	} else {
		data, missing, err = r.inlineOrConfigMap(ctx, run)
	}
	if missing != "" || err != nil {
		return Found{Missing: missing}, err
	}
	file, invalid := ValidateEvalFile(run, data)
	if invalid == "" && pb != nil {
		// Every input file must be in the bundle: the runner gets them, and only them.
		invalid = bundleInputs(pb.manifest, file.parsed)
	}
	return Found{File: file, Bundle: pb, Invalid: invalid}, nil
}

// inlineOrConfigMap returns the bytes of an inline or ConfigMap eval file, or a message saying what is missing.
func (r *Reader) inlineOrConfigMap(ctx context.Context, run *evalsv1alpha1.EvalRun) ([]byte, string, error) {
	src := run.Spec.EvalFile
	if src.Inline != nil {
		return []byte(*src.Inline), "", nil
	}
	ref := src.ConfigMapKeyRef
	if ref == nil {
		return nil, "spec.evalFile names no source", nil
	}
	key := ref.Key
	if key == "" {
		key = evalsv1alpha1.DefaultEvalFileKey
	}
	cm := &corev1.ConfigMap{}
	err := r.api.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.Name}, cm)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Sprintf("waiting for ConfigMap %s holding the eval file", ref.Name), nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the eval file's ConfigMap %s: %w", ref.Name, err)
	}
	if v, ok := cm.Data[key]; ok {
		return []byte(v), "", nil
	}
	if v, ok := cm.BinaryData[key]; ok {
		return v, "", nil
	}
	return nil, fmt.Sprintf("waiting for key %s in ConfigMap %s holding the eval file", key, ref.Name), nil
}

// ReadingBucket says what pinning run reads from a bucket, "" when its eval file is not in one.
func ReadingBucket(run *evalsv1alpha1.EvalRun) string {
	if o := run.Spec.EvalFile.S3; o != nil {
		return fmt.Sprintf("reading the eval file %s from bucket %s at %s", o.Key, o.Bucket, o.Endpoint)
	}
	if b := run.Spec.EvalFile.Bundle; b != nil && b.S3 != nil {
		return fmt.Sprintf("reading the eval bundle %s/ from bucket %s at %s", ptr.Deref(b.S3.Prefix, ""), b.S3.Bucket, b.S3.Endpoint)
	}
	return ""
}
