package controller

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// The manager gets (never lists or watches) the one Secret a run's spec.storage.s3 names, to read the shards'
// results from the bucket when it merges them.

// bucketCredentials returns the keys of the run's bucket credentials Secret, or a message saying what is missing.
func (r *EvalRunReconciler) bucketCredentials(ctx context.Context, run *evalsv1alpha1.EvalRun) (string, objstore.Secret, string, error) {
	return stored.Credentials(ctx, r.apiReader, run.Namespace, run.Spec.Storage.S3.CredentialsSecret)
}

// errInvalidEvalObject marks an eval file object that can never be used (its sha256 or size is wrong).
var errInvalidEvalObject = errors.New("invalid eval file object")

// scanEvalObject reads the eval file from its bucket object as a stream, through the object's size and sha256
// check and evalfile.Scan, within the run's bucket call bounds (bucketContext): the manager never holds the file
// (up to 512 MiB) whole, only its facts (evalFileFacts, data nil unless Scan parsed a small file whole). It returns
// the facts or a message saying why the file is invalid; a message instead while the Secret or the object is
// missing; an error wrapping errInvalidEvalObject when the object is there but not the expected file (which wins
// over anything Scan found); and a bucketError when the bucket fails or does not answer in time.
func (r *EvalRunReconciler) scanEvalObject(ctx context.Context, run *evalsv1alpha1.EvalRun) (evalFileFacts, string, string, error) {
	o := run.Spec.EvalFile.S3
	store, missing, err := stored.OpenBucket(ctx, r.apiReader, run.Namespace, o.S3Bucket)
	if missing != "" || err != nil {
		return evalFileFacts{}, "", missing, err
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
		return evalFileFacts{}, "", fmt.Sprintf("waiting for the eval file %s", store.URI(o.Key)), nil
	case errors.Is(err, objstore.ErrDigestMismatch), errors.Is(err, objstore.ErrTooLarge):
		return evalFileFacts{}, "", "", fmt.Errorf("%w: %w", errInvalidEvalObject, err)
	case err != nil:
		return evalFileFacts{}, "", "", bucketpool.OnBucket(o.Endpoint, "reading the eval file "+store.URI(o.Key), err)
	case defaultsErr != nil:
		return evalFileFacts{}, "invalid eval file: " + defaultsErr.Error(), "", nil
	case scanErr != nil:
		return evalFileFacts{}, invalidMessage(scanErr), "", nil
	}
	return newEvalFileFacts(facts, facts.Text(), o.SHA256), "", "", nil
}

// eachStoredChunk calls f with every stored chunk of results of run (stored.EachChunk, read uncached), within the
// run's bucket call bounds.
func (r *EvalRunReconciler) eachStoredChunk(ctx context.Context, run *evalsv1alpha1.EvalRun, configMaps, objects []string,
	skipGone bool, f func(where string, data []byte) error) error {
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	err := stored.EachChunk(bctx, r.apiReader, run, configMaps, objects, skipGone, f)
	return bucketpool.OnStorage(run, "reading the stored results of EvalRun "+run.Name, err)
}

// eachStoredLine calls f with every stored result line of of (stored.EachLine, read uncached), within the bucket
// call bounds of the run being reconciled.
func (r *EvalRunReconciler) eachStoredLine(ctx context.Context, run, of *evalsv1alpha1.EvalRun, f func(*results.Line) error) (string, error) {
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	msg, err := stored.EachLine(bctx, r.apiReader, of, f)
	return msg, bucketpool.OnStorage(of, "reading the stored results of EvalRun "+of.Name, err)
}
