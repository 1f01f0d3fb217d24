package evalsource

import (
	"context"
	"errors"
	"fmt"
	"io"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// The manager gets (never lists or watches) the one Secret a run's spec.evalFile.s3, spec.evalFile.bundle.s3 or
// spec.storage.s3 names: to read its eval file or bundle, and its shards' results when it merges them.

// errInvalidObject marks an eval file object that can never be used (its sha256 or size is wrong).
var errInvalidObject = errors.New("invalid eval file object")

// scanObject reads the eval file from its bucket object as a stream, through the object's size and sha256 check
// and evalfile.Scan, within the run's bucket call bounds (bucketpool.Bounds): the manager never holds the file (up
// to 512 MiB) whole, only its facts (File, Data nil unless Scan parsed a small file whole). It returns the file or
// Invalid saying why it is invalid; Missing instead while the Secret or the object is missing; an error wrapping
// errInvalidObject when the object is there but not the expected file (which wins over anything Scan found); and
// a bucketpool.CallError when the bucket fails or does not answer in time.
func (r *Reader) scanObject(ctx context.Context, run *evalsv1alpha1.EvalRun) (Found, error) {
	o := run.Spec.EvalFile.S3
	store, missing, err := stored.OpenBucket(ctx, r.api, run.Namespace, o.S3Bucket)
	if missing != "" || err != nil {
		return Found{Missing: missing}, err
	}
	defaults, defaultsErr := children.DefaultEvaluators(run)
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	// The object streams through the pipe as Scan reads it; Scan reads to the end, so the download ends, with the
	// digest's verdict, before Scan returns.
	pr, pw := io.Pipe()
	got := make(chan error, 1)
	go func() {
		err := store.GetVerified(bctx, o.Key, o.SHA256, children.MaxEvalObjectBytes, pw)
		pw.CloseWithError(err) // nil: Scan reads the end of the text
		got <- err
	}()
	facts, scanErr := evalfile.Scan(pr, evalfile.WithDefaultEvaluators(defaults))
	pr.CloseWithError(errors.New("the eval file's reader stopped")) // a download Scan left early stops writing
	err = <-got
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		return Found{Missing: fmt.Sprintf("waiting for the eval file %s", store.URI(o.Key))}, nil
	case errors.Is(err, objstore.ErrDigestMismatch), errors.Is(err, objstore.ErrTooLarge):
		return Found{}, fmt.Errorf("%w: %w", errInvalidObject, err)
	case err != nil:
		return Found{}, bucketpool.OnBucket(o.Endpoint, "reading the eval file "+store.URI(o.Key), err)
	case defaultsErr != nil:
		return Found{Invalid: "invalid eval file: " + defaultsErr.Error()}, nil
	case scanErr != nil:
		return Found{Invalid: invalidMessage(scanErr)}, nil
	}
	return Found{File: newFile(facts, facts.Text(), o.SHA256)}, nil
}
