// Package collect is the manager's collections stage: what a run's collectors and earlier runs stored, read and
// put together. It observes the shards of a sharded or resumed run (their ConfigMaps, or, with
// spec.storage.statusFrom: Bucket, their summary.json objects once each collector's termination message says they
// are there), merges every shard's stored results (and a resumed run's carried ones) into one results section,
// plans a resume (the results it carries) and a re-judge (where the source's records are), and compares a finished
// run with its baseline. It returns what it found (an observation, a section, a plan, a comparison, or an
// assessment saying why not) and leaves writing the run's status and creating its children to the reconciler; the
// one object it writes is a resumed run's carried results in its own bucket.
package collect

import (
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/bucketpool"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/options"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/runmemo"
)

// Collections reads runs' collections and stored results.
type Collections struct {
	// client reads the manager's cache (shard ConfigMaps keep their data there); apiReader reads uncached.
	client    client.Reader
	apiReader client.Reader
	// memo keeps the collections read from a bucket, once per pod.
	memo   *runmemo.Memo
	bounds bucketpool.Bounds
	clock  clock.PassiveClock
	opts   options.Options
}

// New returns the collections stage: cache is the manager's cached reader, apiReader reads from the API server;
// bounds bounds each bucket call; opts (defaulted) gives the status budget.
func New(cache, apiReader client.Reader, memo *runmemo.Memo, bounds bucketpool.Bounds, clk clock.PassiveClock, opts options.Options) *Collections {
	return &Collections{client: cache, apiReader: apiReader, memo: memo, bounds: bounds, clock: clk, opts: opts}
}
