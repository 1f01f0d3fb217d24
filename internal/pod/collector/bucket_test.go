package collector

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// TestPersistBucketOnly: with bucketOnly the collector has no API client at all; it stores the shard's results and
// its whole collection (summary.json, the section a shard ConfigMap would hold) in the bucket. A bucket it cannot
// use is its error (for the termination message), still without any API call.
func TestPersistBucketOnly(t *testing.T) {
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	f := newFixture(t)
	f.write(t, f.Pod.Output().BatchOutput(), `{"id":"alpha","text":"A"}`+"\n"+`{"id":"beta","text":"B"}`+"\n")
	f.finishedRunner(t, 0)
	f.Config.Bucket = &podwire.Bucket{Endpoint: srv.Endpoint, Bucket: "evals", Prefix: "nightly"}
	f.Config.BucketOnly = true
	creds := t.TempDir()
	for name, value := range map[string]string{objstore.AccessKeyIDFile: srv.AccessKeyID, objstore.SecretAccessKeyFile: srv.SecretAccessKey} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Config: f.Config, Namespace: "team-a", Name: "nightly", UID: "0f9e8d7c-1111-2222-3333-444455556666"}
	bucket, err := openShardBucket(f.Config, o.Namespace, o.Name, o.UID, creds)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in := GatherInput{Config: f.Config, Output: f.Pod.SnapshotOutput(), EndCause: outcome.EndEnded, PodName: "pod-1", Now: time.Now(),
		Snapshot: TakeSnapshot(f.Config, f.Pod.Output(), f.Pod.SnapshotOutput()), Launcher: f.report, ResultsObject: bucket.resultsURI()}
	g, err := Gather(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := persist(ctx, o, g, bucket, nil); err != nil {
		t.Fatalf("persist with bucketOnly and no API client: %v", err)
	}
	store := srv.Store(t, "evals", "nightly")
	rc, err := store.Get(ctx, bucket.summaryKey)
	if err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	data, err := io.ReadAll(rc)
	_ = rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got results.Section
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Collection == nil || got.Collection.PodName != "pod-1" || got.Summary == nil || got.Summary.Total != g.Summary.Total {
		t.Errorf("summary.json holds %s; want pod-1's collection of %d cases", data, g.Summary.Total)
	}
	if ok, err := store.Exists(ctx, bucket.resultsKey); err != nil || !ok {
		t.Errorf("results.jsonl.gz exists %v (%v)", ok, err)
	}

	// A bucket that cannot be opened (no credentials): the error, and nothing else is tried.
	err = persist(ctx, o, g, nil, os.ErrNotExist)
	if err == nil || !strings.Contains(err.Error(), "storing the results in the bucket") {
		t.Errorf("persist without the bucket's credentials: %v; want the bucket's error", err)
	}
}

// TestShardBucketKeysPerPod: each pod's objects are its completion index's: with trials, trial 2 of shard 1 of a
// run of 2 shards is index 3, and its objects are index 3's, not shard 1's.
func TestShardBucketKeysPerPod(t *testing.T) {
	creds := t.TempDir()
	for name, value := range map[string]string{objstore.AccessKeyIDFile: "id", objstore.SecretAccessKeyFile: "secret"} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &podwire.RunConfig{Shards: 2, Trials: 3, CaseIDs: []string{"a", "b", "c"}, Bucket: &podwire.Bucket{Endpoint: "http://127.0.0.1:1", Bucket: "evals"}}
	if err := cfg.LoadShard("3"); err != nil {
		t.Fatal(err)
	}
	b, err := openShardBucket(cfg, "team-a", "nightly", "uid-1", creds)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{b.resultsKey, b.summaryKey, b.recordsKey} {
		if !strings.HasPrefix(key, "team-a/nightly/uid-1/shards/3/") {
			t.Errorf("trial 2 of shard 1 stores %s, want it under index 3", key)
		}
	}
	if cfg.ShardIndex != 1 || cfg.Trial != 2 {
		t.Errorf("index 3 is shard %d trial %d, want shard 1 trial 2", cfg.ShardIndex, cfg.Trial)
	}
}

// TestRejudgeRecordsPerPod: a re-judge with trials reads its source's records object of its own completion index:
// trial 2 of shard 1 of 2 shards (index 3) reads the source's index 3, never its shard 1's first trial (index 1).
func TestRejudgeRecordsPerPod(t *testing.T) {
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	store := srv.Store(t, "evals", "nightly")
	ctx := context.Background()
	src := objstore.RunRef{Namespace: "team-a", Name: "source", UID: "uid-src"}
	for _, index := range []int{1, 3} {
		key, err := src.ShardRecordsKey(index)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Put(ctx, key, strings.NewReader("index "+strconv.Itoa(index)), objstore.ContentTypeGzip); err != nil {
			t.Fatal(err)
		}
	}
	creds := t.TempDir()
	for name, value := range map[string]string{objstore.AccessKeyIDFile: srv.AccessKeyID, objstore.SecretAccessKeyFile: srv.SecretAccessKey} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &podwire.RunConfig{Shards: 2, Trials: 3, CaseIDs: []string{"a", "b", "c"}, Bucket: &podwire.Bucket{Endpoint: srv.Endpoint, Bucket: "evals", Prefix: "nightly"},
		Rejudge: &podwire.Rejudge{From: src.Name, FromUID: src.UID, InBucket: true, Shards: 2}}
	if err := cfg.LoadShard("3"); err != nil {
		t.Fatal(err)
	}
	bucket, err := openShardBucket(cfg, "team-a", "rejudge", "uid-rejudge", creds)
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	err = rejudgeRecords(Options{Config: cfg, Namespace: "team-a"}, bucket)(ctx, func(where string, chunk []byte) error {
		read = append(read, string(chunk))
		if !strings.HasSuffix(where, "/shards/3/records.jsonl.gz") {
			t.Errorf("read %s, want the source's index 3", where)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(read) != 1 || read[0] != "index 3" {
		t.Errorf("read %q, want the source's index 3's records only", read)
	}
}
