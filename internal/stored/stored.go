// Package stored reads a run's stored per-case results and kept records: the gzip'd JSONL chunks in its result
// (and record) ConfigMaps and in the objects of its bucket (spec.storage.s3), opened with the credentials Secret
// the run names. The manager (to
// merge shards, carry results into a resumed run and compare with a baseline) and `kubectl evalrun` read them
// through it. I/O: it reads through a controller-runtime client.Reader.
package stored

import (
	"context"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// MaxObjectBytes bounds one results object read from a bucket (a shard's gzip'd results).
const MaxObjectBytes = 256 << 20

// ErrGone marks stored results that are no longer there.
var ErrGone = errors.New("stored results are gone")

// Credentials returns the keys of a bucket credentials Secret, read through reader, or a message saying what is
// missing.
func Credentials(ctx context.Context, reader client.Reader, namespace, name string) (string, objstore.Secret, string, error) {
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

// OpenBucket opens a bucket with its credentials Secret in namespace (read through reader), or says what is
// missing.
func OpenBucket(ctx context.Context, reader client.Reader, namespace string, b evalsv1alpha1.S3Bucket) (*objstore.Store, string, error) {
	id, key, missing, err := Credentials(ctx, reader, namespace, b.CredentialsSecret)
	if missing != "" || err != nil {
		return nil, missing, err
	}
	store, err := objstore.Open(objstore.Config{Endpoint: b.Endpoint, Region: ptr.Deref(b.Region, ""), Bucket: b.Bucket,
		Prefix: ptr.Deref(b.Prefix, ""), PathStyle: true, AccessKeyID: id, SecretAccessKey: key})
	return store, "", err
}

// HasResults reports a run whose status names stored results.
func HasResults(run *evalsv1alpha1.EvalRun) bool {
	refs := run.Status.Results
	return refs != nil && len(refs.ConfigMaps)+len(refs.Objects) > 0
}

// EachChunk calls f with every stored chunk of results (gzip'd JSONL) of run: the result ConfigMaps named, then
// the bucket objects (s3:// URIs of run's bucket). Stored results that are gone are skipped when skipGone, an
// error wrapping ErrGone otherwise.
func EachChunk(ctx context.Context, reader client.Reader, run *evalsv1alpha1.EvalRun, configMaps, objects []string,
	skipGone bool, f func(where string, data []byte) error) error {
	for _, name := range configMaps {
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				if skipGone {
					continue
				}
				return fmt.Errorf("result ConfigMap %s: %w", name, ErrGone)
			}
			return fmt.Errorf("reading result ConfigMap %s: %w", name, err)
		}
		if data := cm.BinaryData[podwire.ResultsKey]; len(data) > 0 {
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
	store, missing, err := OpenBucket(ctx, reader, run.Namespace, run.Spec.Storage.S3)
	if missing != "" {
		return errors.New(missing)
	}
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
			return fmt.Errorf("results object %s: %w", uri, ErrGone)
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

// EachLine calls f with every stored result line of run (its status.results). It returns a message when the
// stored results are gone or unreadable (for good; f's error counts as unreadable), an error when reading them
// failed otherwise (the API server, the bucket).
func EachLine(ctx context.Context, reader client.Reader, run *evalsv1alpha1.EvalRun, f func(*results.Line) error) (string, error) {
	refs := run.Status.Results
	if refs == nil {
		return "", nil
	}
	var unreadable error
	err := EachChunk(ctx, reader, run, results.ConfigMapNames(refs), results.ObjectURLs(refs), false, func(where string, data []byte) error {
		if err := results.EachLine(data, func(l *results.Line, _ []byte) error { return f(l) }); err != nil {
			unreadable = fmt.Errorf("%s cannot be read: %w", where, err)
		}
		return unreadable
	})
	switch {
	case unreadable != nil:
		return unreadable.Error(), nil
	case errors.Is(err, ErrGone):
		return err.Error(), nil
	case err != nil:
		return "", err
	}
	return "", nil
}

func readObject(ctx context.Context, store *objstore.Store, key string) ([]byte, error) {
	rc, err := store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	data, err := io.ReadAll(io.LimitReader(rc, MaxObjectBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxObjectBytes {
		return nil, fmt.Errorf("results object %s is over %d bytes", store.URI(key), MaxObjectBytes)
	}
	return data, nil
}

// EachRecordChunk calls f with every chunk of kept records (gzip'd JSONL, internal/records) of run's shards: the
// record ConfigMaps named (they are the run's <run>-evalrun-records-<n>, possibly empty), then, for a run with a
// bucket, the records object of each of its shards (shards of them). Records that are gone are skipped: a record
// that was not kept and one that is gone are alike to a reader, which counts what it finds.
func EachRecordChunk(ctx context.Context, reader client.Reader, run *evalsv1alpha1.EvalRun, configMaps []string, shards int,
	f func(where string, data []byte) error) error {
	for _, name := range configMaps {
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading record ConfigMap %s: %w", name, err)
		}
		if data := cm.BinaryData[podwire.RecordsKey]; len(data) > 0 {
			if err := f("record ConfigMap "+name, data); err != nil {
				return err
			}
		}
	}
	if run.Spec.Storage == nil || shards <= 0 {
		return nil
	}
	store, missing, err := OpenBucket(ctx, reader, run.Namespace, run.Spec.Storage.S3)
	if missing != "" {
		return errors.New(missing)
	}
	if err != nil {
		return err
	}
	ref := objstore.RunRef{Namespace: run.Namespace, Name: run.Name, UID: string(run.UID)}
	for i := range shards {
		key, err := ref.ShardRecordsKey(i)
		if err != nil {
			return err
		}
		data, err := readObject(ctx, store, key)
		if errors.Is(err, objstore.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := f("records object "+store.URI(key), data); err != nil {
			return err
		}
	}
	return nil
}
