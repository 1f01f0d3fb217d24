package collector

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/evalrun-operator/evalrun-operator/internal/objstore"
	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// The source run of BenchmarkRejudge: its name, UID and namespace (the re-judge's too).
const (
	benchSource    = "bench"
	benchSourceUID = "0f9e8d7c-1111-2222-3333-444455556666"
	benchNamespace = "bench"
)

// BenchmarkRejudge is the collector of a re-judge (spec.rejudge.from) of the reference workload, against
// BenchmarkGatherKeepRecords, the fresh collection of the same workload that kept the records: it reads the
// source's kept records, writes them into its snapshot as the source's runner wrote its output, and runs the
// unchanged pipeline on it, keeping the records again (rejudgeSnapshot, then Gather, as Collect does). The records
// are those a real Gather of the workload kept, read back through the collector's own reading: from the 64 record
// ConfigMaps with its API client (a fake one holding the ConfigMaps, the only stand-in: its Get round-trips each
// ConfigMap through JSON, as the wire does), and from the records object in a real SeaweedFS bucket (EVALRUN_WEED;
// without it, from the object's bytes through the same decoder, said in the log). The re-judge must give the
// fresh collection's summary. ConfigMaps also reports the peak RSS and heap of a fresh process doing one re-judge
// (the ConfigMaps read one at a time from files, as the API would return them one by one).
func BenchmarkRejudge(b *testing.B) {
	base, out, size := benchWorkload(b)
	for _, where := range []string{"ConfigMaps", "Bucket"} {
		b.Run(where, func(b *testing.B) {
			srcIn := keepRecordsInput(base, out, where)
			src, err := Gather(context.Background(), srcIn)
			if err != nil {
				b.Fatal(err)
			}
			rj := newBenchRejudge(b, srcIn, src, where)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			var g *Gathered
			for range b.N {
				g = rj.run(b)
			}
			b.StopTimer()
			b.ReportMetric(cpu.seconds()/float64(b.N), "cpu-s/op")
			if diff := cmp.Diff(src.Summary, g.Summary); diff != "" {
				b.Fatalf("the re-judge's summary differs from the fresh collection's (-fresh +re-judge):\n%s", diff)
			}
			reportRecords(b, g, size)
			if where == "ConfigMaps" {
				reportRSS(b, rj.o.Config, "peak-RSS-MiB", rssRejudge+"="+writeChunkFiles(b, src.Records))
			}
		})
	}
}

// benchRejudge is a re-judge of a source collection: the pod's options and where its records are read from.
type benchRejudge struct {
	o   Options
	src RecordSource
	// resultsObject and recordsObject are the re-judge's own bucket objects (where "Bucket").
	resultsObject, recordsObject string
}

// newBenchRejudge stores the records of src (collected by srcIn) where a re-judge reads them and returns the
// re-judge: its configuration is srcIn's with spec.rejudge.from naming the source.
func newBenchRejudge(b *testing.B, srcIn GatherInput, src *Gathered, where string) *benchRejudge {
	b.Helper()
	cfg := *srcIn.Config
	cfg.RunName = "bench-rejudge"
	cfg.Rejudge = &podwire.Rejudge{From: benchSource, FromUID: benchSourceUID}
	rj := &benchRejudge{o: Options{Config: &cfg, Pod: podwire.PodIn(b.TempDir()), Namespace: benchNamespace, Name: cfg.RunName,
		Log: io.Discard},
		resultsObject: srcIn.ResultsObject, recordsObject: srcIn.RecordsObject}
	if where == "ConfigMaps" {
		cfg.Rejudge.ConfigMaps = cfg.Records.ConfigMaps
		rj.o.Client = recordConfigMapClient(b, cfg.Records.ConfigMaps, src.Records)
		rj.src = rejudgeRecords(rj.o, nil)
		return rj
	}
	cfg.Rejudge.InBucket = true
	if len(src.Records) != 1 {
		b.Fatalf("the source kept %d records objects, want 1", len(src.Records))
	}
	if _, err := s3server.Binary(); err != nil {
		b.Logf("the records object is read from its bytes, not from a bucket: %v", err)
		rj.src = chunkSource(src.Records[0].Data)
		return rj
	}
	bucket := benchBucket(b, &cfg, src.Records[0].Data)
	rj.src = rejudgeRecords(rj.o, bucket)
	return rj
}

// recordConfigMapClient is an API client holding the source's record ConfigMaps names, pre-created empty as the
// manager does, with the chunks' data.
func recordConfigMapClient(b *testing.B, names []string, chunks []results.Chunk) client.Client {
	b.Helper()
	data := map[string][]byte{}
	for _, c := range chunks {
		data[c.Destination] = c.Data
	}
	objs := make([]client.Object, 0, len(names))
	for _, name := range names {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: name}}
		if d, ok := data[name]; ok {
			cm.BinaryData = map[string][]byte{podwire.RecordsKey: d}
			delete(data, name)
		}
		objs = append(objs, cm)
	}
	if len(data) > 0 {
		b.Fatalf("records chunks for ConfigMaps the run does not name: %d", len(data))
	}
	return fake.NewClientBuilder().WithObjects(objs...).Build()
}

// benchBucket starts a SeaweedFS server, stores the source shard's records object in it, and returns the
// re-judge's shard bucket (cfg.Bucket is set to it).
func benchBucket(b *testing.B, cfg *podwire.RunConfig, records []byte) *shardBucket {
	b.Helper()
	srv := s3server.Start(b, s3server.Options{Buckets: []string{"evals"}})
	cfg.Bucket = &podwire.Bucket{Endpoint: srv.Endpoint, Bucket: "evals", Prefix: "nightly"}
	key, err := objstore.RunRef{Namespace: benchNamespace, Name: benchSource, UID: benchSourceUID}.ShardRecordsKey(0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := srv.Store(b, "evals", "nightly").Put(ctx, key, bytes.NewReader(records), objstore.ContentTypeGzip); err != nil {
		b.Fatal(err)
	}
	creds := b.TempDir()
	for name, value := range map[string]string{objstore.AccessKeyIDFile: srv.AccessKeyID, objstore.SecretAccessKeyFile: srv.SecretAccessKey} {
		if err := os.WriteFile(filepath.Join(creds, name), []byte(value), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	bucket, err := openShardBucket(cfg, benchNamespace, cfg.RunName, "uid-rejudge", creds)
	if err != nil {
		b.Fatal(err)
	}
	return bucket
}

// run is one re-judge, as Collect does it: the records into the snapshot, then the collection.
func (r *benchRejudge) run(tb testing.TB) *Gathered {
	tb.Helper()
	return rejudgeOnce(tb, r.o, r.src, r.resultsObject, r.recordsObject)
}

// rejudgeOnce re-judges from src with o, as Collect does (rejudgeSnapshot, Rejudged.apply, Gather), the results
// and records going to the bucket objects named, if any; every source record must be judged.
func rejudgeOnce(tb testing.TB, o Options, src RecordSource, resultsObject, recordsObject string) *Gathered {
	tb.Helper()
	ctx := context.Background()
	file, rj, err := rejudgeSnapshot(ctx, o, src)
	if err != nil {
		tb.Fatal(err)
	}
	if rj.Judged != len(o.Config.CaseIDs) {
		tb.Fatalf("%s; want every case judged", rj.Note(o.Config.Rejudge.From))
	}
	in := GatherInput{Config: o.Config, Output: o.Pod.SnapshotOutput(), EndCause: outcome.EndEnded, Now: time.Now(),
		EvalFile: file, ResultsObject: resultsObject, RecordsObject: recordsObject}
	rj.apply(&in, o.Config.Rejudge)
	g, err := Gather(ctx, in)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// writeChunkFiles writes each records chunk to a file of a new directory, in order, and returns the directory.
func writeChunkFiles(b *testing.B, chunks []results.Chunk) string {
	b.Helper()
	dir := filepath.Join(benchWork.dir, "rejudge-records")
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i, c := range chunks {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d", i)), c.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// rejudgeFromFiles is the child process's re-judge (rssRejudge): the chunks in dir, each file read only when the
// re-judge comes to it, its pod in a new directory of the workload's.
func rejudgeFromFiles(t *testing.T, cfg *podwire.RunConfig, dir string) *Gathered {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	src := func(_ context.Context, f func(string, []byte) error) error {
		for _, name := range names {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			if err := f("file "+name, data); err != nil {
				return err
			}
		}
		return nil
	}
	pod, err := os.MkdirTemp(os.Getenv("PODRUNTIME_RSS_WORK"), "rejudge-pod-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(pod) }()
	o := Options{Config: cfg, Pod: podwire.PodIn(pod), Namespace: benchNamespace, Name: cfg.RunName, Log: io.Discard}
	return rejudgeOnce(t, o, src, "", "")
}
