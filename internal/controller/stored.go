package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// The manager gets (never lists or watches) the one Secret a run's spec.storage.s3 names, to read the shards'
// results from the bucket when it merges them.

// maxStoredObjectBytes bounds one results object the manager reads (a shard's gzip'd results).
const maxStoredObjectBytes = 256 << 20

// errStoredGone marks stored results that are no longer there.
var errStoredGone = errors.New("stored results are gone")

// bucketCredentials returns the keys of the run's bucket credentials Secret, or a message saying what is missing.
func (r *EvalRunReconciler) bucketCredentials(ctx context.Context, run *evalsv1alpha1.EvalRun) (string, objstore.Secret, string, error) {
	return credentials(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3.CredentialsSecret)
}

// credentials returns the keys of a bucket credentials Secret, read uncached through reader, or a message saying
// what is missing.
func credentials(ctx context.Context, reader client.Reader, namespace, name string) (string, objstore.Secret, string, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", fmt.Sprintf("waiting for Secret %s holding the bucket's credentials (keys %s and %s)",
				name, objstore.AccessKeyIDFile, objstore.SecretAccessKeyFile), nil
		}
		return "", "", "", fmt.Errorf("reading the bucket's credentials Secret %s: %w", name, err)
	}
	id, key := string(secret.Data[objstore.AccessKeyIDFile]), secret.Data[objstore.SecretAccessKeyFile]
	if id == "" || len(key) == 0 {
		return "", "", fmt.Sprintf("waiting for keys %s and %s in Secret %s holding the bucket's credentials",
			objstore.AccessKeyIDFile, objstore.SecretAccessKeyFile, name), nil
	}
	return id, objstore.Secret(key), "", nil
}

// runBucket opens the bucket a run stores its results in (spec.storage.s3), with its credentials Secret.
func (r *EvalRunReconciler) runBucket(ctx context.Context, run *evalsv1alpha1.EvalRun) (*objstore.Store, error) {
	store, missing, err := openBucket(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3)
	if missing != "" {
		return nil, errors.New(missing)
	}
	return store, err
}

// openBucket opens a bucket with its credentials Secret in namespace (read through reader), or says what is
// missing.
func openBucket(ctx context.Context, reader client.Reader, namespace string, b evalsv1alpha1.S3Bucket) (*objstore.Store, string, error) {
	id, key, missing, err := credentials(ctx, reader, namespace, b.CredentialsSecret)
	if missing != "" || err != nil {
		return nil, missing, err
	}
	store, err := objstore.Open(objstore.Config{Endpoint: b.Endpoint, Region: ptr.Deref(b.Region, ""), Bucket: b.Bucket,
		Prefix: ptr.Deref(b.Prefix, ""), PathStyle: true, AccessKeyID: id, SecretAccessKey: key})
	return store, "", err
}

// bucketOf is the layout form of a bucket (without its credentials).
func bucketOf(b evalsv1alpha1.S3Bucket) layout.Bucket {
	return layout.Bucket{Endpoint: b.Endpoint, Region: ptr.Deref(b.Region, ""), Bucket: b.Bucket, Prefix: ptr.Deref(b.Prefix, "")}
}

// maxEvalObjectBytes bounds an eval file read from a bucket.
const maxEvalObjectBytes = 512 << 20

// errInvalidEvalObject marks an eval file object that can never be used (its sha256 or size is wrong).
var errInvalidEvalObject = errors.New("invalid eval file object")

// evalObject reads the eval file from its bucket object, verifying its size and sha256. It returns a message
// instead while the Secret or the object is missing, and an error wrapping errInvalidEvalObject when the object is
// there but not the expected file.
func (r *EvalRunReconciler) evalObject(ctx context.Context, run *evalsv1alpha1.EvalRun) ([]byte, string, error) {
	o := run.Spec.EvalFile.S3
	store, missing, err := openBucket(ctx, r.apiReader, run.Namespace, o.S3Bucket)
	if missing != "" || err != nil {
		return nil, missing, err
	}
	var buf bytes.Buffer
	err = store.GetVerified(ctx, o.Key, o.SHA256, maxEvalObjectBytes, &buf)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return nil, fmt.Sprintf("waiting for the eval file %s", store.URI(o.Key)), nil
	case errors.Is(err, objstore.ErrDigestMismatch), errors.Is(err, objstore.ErrTooLarge):
		return nil, "", fmt.Errorf("%w: %w", errInvalidEvalObject, err)
	case err != nil:
		return nil, "", err
	}
	return buf.Bytes(), "", nil
}

// eachStoredChunk calls f with every stored chunk of results (gzip'd JSONL) of run: the result ConfigMaps named,
// then the bucket objects (s3:// URIs of run's bucket). Stored results that are gone are skipped when skipGone,
// an error wrapping errStoredGone otherwise.
func (r *EvalRunReconciler) eachStoredChunk(ctx context.Context, run *evalsv1alpha1.EvalRun, configMaps, objects []string,
	skipGone bool, f func(where string, data []byte) error) error {
	for _, name := range configMaps {
		cm := &corev1.ConfigMap{}
		if err := r.apiReader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				if skipGone {
					continue
				}
				return fmt.Errorf("result ConfigMap %s: %w", name, errStoredGone)
			}
			return fmt.Errorf("reading result ConfigMap %s: %w", name, err)
		}
		if data := cm.BinaryData[layout.ResultsKey]; len(data) > 0 {
			if err := f("result ConfigMap "+name, data); err != nil {
				return err
			}
		}
	}
	if len(objects) == 0 {
		return nil
	}
	if run.Spec.Storage == nil {
		return fmt.Errorf("EvalRun %s names results in a bucket but has no spec.storage", run.Name)
	}
	store, err := r.runBucket(ctx, run)
	if err != nil {
		return err
	}
	for _, uri := range objects {
		key, ok := store.KeyOf(uri)
		if !ok {
			return fmt.Errorf("results object %s is not in EvalRun %s's bucket", uri, run.Name)
		}
		data, err := readObject(ctx, store, key)
		if errors.Is(err, objstore.ErrNotFound) {
			if skipGone {
				continue
			}
			return fmt.Errorf("results object %s: %w", uri, errStoredGone)
		}
		if err != nil {
			return err
		}
		if err := f("results object "+uri, data); err != nil {
			return err
		}
	}
	return nil
}

func readObject(ctx context.Context, store *objstore.Store, key string) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(io.LimitReader(rc, maxStoredObjectBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStoredObjectBytes {
		return nil, fmt.Errorf("results object %s is over %d bytes", store.URI(key), maxStoredObjectBytes)
	}
	return data, nil
}
