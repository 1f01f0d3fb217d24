package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
)

// shardBucket is where a shard's collector stores its results and collection when the run keeps its results in a
// bucket (spec.storage.s3): <prefix>/<namespace>/<run>/<uid>/shards/<index>/{results.jsonl.gz,summary.json}.
type shardBucket struct {
	store                              *objstore.Store
	resultsKey, summaryKey, recordsKey string
}

// openShardBucket opens the run's bucket with the credentials mounted in credentialsDir (the collector's only)
// and names the shard's objects. Opening does no I/O.
func openShardBucket(cfg *podwire.RunConfig, namespace, name, uid, credentialsDir string) (*shardBucket, error) {
	b := cfg.Bucket
	oc, err := objstore.ConfigFromDir(credentialsDir, objstore.Config{
		Endpoint: b.Endpoint, Region: b.Region, Bucket: b.Bucket, Prefix: b.Prefix, PathStyle: true,
	})
	if err != nil {
		return nil, fmt.Errorf("the bucket's credentials: %w", err)
	}
	store, err := objstore.Open(oc)
	if err != nil {
		return nil, err
	}
	ref := objstore.RunRef{Namespace: namespace, Name: name, UID: uid}
	sb := &shardBucket{store: store}
	// One set of objects per pod, keyed by its completion index: with trials, each trial of a shard has its own.
	if sb.resultsKey, err = ref.ShardResultsKey(int(cfg.PodIndex)); err != nil {
		return nil, err
	}
	if sb.summaryKey, err = ref.ShardSummaryKey(int(cfg.PodIndex)); err != nil {
		return nil, err
	}
	if sb.recordsKey, err = ref.ShardRecordsKey(int(cfg.PodIndex)); err != nil {
		return nil, err
	}
	return sb, nil
}

// resultsURI is the s3:// URI of the shard's results object ("" without a bucket).
func (b *shardBucket) resultsURI() string {
	if b == nil {
		return ""
	}
	return b.store.URI(b.resultsKey)
}

// recordsURI is the s3:// URI of the shard's records object ("" without a bucket).
func (b *shardBucket) recordsURI() string {
	if b == nil {
		return ""
	}
	return b.store.URI(b.recordsKey)
}

// putRecords stores the shard's kept records (its one chunk, when it kept any).
func (b *shardBucket) putRecords(ctx context.Context, chunks []results.Chunk) error {
	for _, ch := range chunks {
		if err := b.store.Put(ctx, b.recordsKey, bytes.NewReader(ch.Data), objstore.ContentTypeGzip); err != nil {
			return fmt.Errorf("storing the records: %w", err)
		}
	}
	return nil
}

// put stores the shard's results (its one chunk, when it has cases) and its collection, the section as JSON.
func (b *shardBucket) put(ctx context.Context, chunks []results.Chunk, section results.Section) error {
	for _, ch := range chunks {
		if err := b.store.Put(ctx, b.resultsKey, bytes.NewReader(ch.Data), objstore.ContentTypeGzip); err != nil {
			return err
		}
	}
	body, err := json.Marshal(section)
	if err != nil {
		return fmt.Errorf("encode the shard's summary: %w", err)
	}
	return b.store.Put(ctx, b.summaryKey, bytes.NewReader(body), objstore.ContentTypeJSON)
}
