package collect

import (
	"context"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/stored"
)

// eachStoredChunk calls f with every stored chunk of results of run (stored.EachChunk, read uncached), within the
// run's bucket call bounds.
func (r *Collections) eachStoredChunk(ctx context.Context, run *evalsv1alpha1.EvalRun, configMaps, objects []string,
	skipGone bool, f func(where string, data []byte) error) error {
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	err := stored.EachChunk(bctx, r.apiReader, run, configMaps, objects, skipGone, f)
	return bucketpool.OnStorage(run, "reading the stored results of EvalRun "+run.Name, err)
}

// eachStoredLine calls f with every stored result line of of (stored.EachLine, read uncached), within the bucket
// call bounds of the run being reconciled.
func (r *Collections) eachStoredLine(ctx context.Context, run, of *evalsv1alpha1.EvalRun, f func(*results.Line) error) (string, error) {
	bctx, cancel := r.bounds.Context(ctx, run)
	defer cancel()
	msg, err := stored.EachLine(bctx, r.apiReader, of, f)
	return msg, bucketpool.OnStorage(of, "reading the stored results of EvalRun "+of.Name, err)
}
