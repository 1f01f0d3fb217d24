package plugin

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// A run that stored its results in a bucket (spec.storage.s3, shard by shard) is read from the bucket, with the
// credentials Secret it names, from a real S3 server (SeaweedFS).
func TestResultsFromABucket(t *testing.T) {
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	ns := newNamespace(t)
	c, _ := apiServer(t)
	ctx := t.Context()
	secret := srv.CredentialsSecret(ns, "bucket-creds")
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	bucket := srv.Bucket("evals", "team-a", "bucket-creds")
	store := srv.Store(t, "evals", "team-a")
	lines := screeningLines([]string{"case-008"}, nil, []string{"case-002"})
	var uris []string
	for shard := range 2 {
		chunks, err := results.Chunks([]string{"unused"}, encode(t, lines[shard*5:(shard+1)*5]))
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%s/bucketed/uid/shards/%d/results.jsonl.gz", ns, shard)
		if err := store.Put(ctx, key, bytes.NewReader(chunks[0].Data), "application/gzip"); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, store.URI(key))
	}
	run := testutil.MakeEvalRun("bucketed", ns).Storage(bucket).Obj()
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status = evalsv1alpha1.EvalRunStatus{Results: &evalsv1alpha1.ResultsReference{Objects: uris, Format: "jsonl+gzip", TotalCases: 10}}
	if err := c.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}

	out, _, err := kubectlEvalrun(t, ns, "results", "bucketed", "--verdict", "Fail,Error")
	if err != nil {
		t.Fatal(err)
	}
	want := `ID         VERDICT   SCORE    EVALUATORS                      MESSAGE
case-008   Fail      0.5000   decision=Fail,trajectory=Pass   decision: decision: expected "REVIEW", got "CLEAR"
case-002   Missing   -        -                               the runner produced no record for this case
`
	if out != want {
		t.Errorf("results:\n%s\nwant:\n%s", out, want)
	}
	out, _, err = kubectlEvalrun(t, ns, "export", "bucketed")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 10 {
		t.Errorf("export: %d lines, want 10", n)
	}

	// Without its credentials the bucket cannot be read; the command says what is missing.
	if err := c.Delete(ctx, secret); err != nil {
		t.Fatal(err)
	}
	_, _, err = kubectlEvalrun(t, ns, "results", "bucketed")
	if want := "reading the results of EvalRun bucketed: waiting for Secret bucket-creds holding the bucket's credentials (keys accessKeyID and secretAccessKey)"; err == nil || err.Error() != want {
		t.Errorf("no Secret: error %v, want %q", err, want)
	}
}
