package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// TestSourceFor: the batching alone chooses between the batch file and one file per case, and Responses reads
// the requested ids' responses from either, leaving out what is missing or unreadable.
func TestSourceFor(t *testing.T) {
	dir := t.TempDir()
	batch := filepath.Join(dir, "results.jsonl")
	lines := `{"id":"b","text":"B"}` + "\n" + `not json` + "\n" + `{"id":"x","text":"X"}` + "\n" + `{"id":"a","text":"A"}` + "\n"
	if err := os.WriteFile(batch, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	readCase := func(id string) ([]byte, error) {
		switch id {
		case "a":
			return []byte("answer a"), nil
		case "bad":
			return []byte("partial"), errors.New("too large")
		}
		return nil, os.ErrNotExist
	}
	tests := []struct {
		name      string
		out       Output
		ids       []string
		wantBatch bool
		want      []string // id=output, in the order fn saw them
	}{
		{name: "batched: output order, requested ids only", out: Output{Batching: evalsv1alpha1.BatchingBatched, BatchPath: batch, ReadCase: readCase},
			ids: []string{"a", "b", "c"}, wantBatch: true, want: []string{"b=B", "a=A"}},
		{name: "no batching given reads the batch file", out: Output{BatchPath: batch, ReadCase: readCase},
			ids: []string{"a"}, wantBatch: true, want: []string{"a=A"}},
		{name: "batched without a file: nothing", out: Output{Batching: evalsv1alpha1.BatchingBatched, BatchPath: filepath.Join(dir, "none.jsonl")},
			ids: []string{"a"}, wantBatch: true},
		{name: "batched, no ids: nothing", out: Output{BatchPath: batch}, wantBatch: true},
		{name: "per case: ids order, missing and unreadable left out", out: Output{Batching: evalsv1alpha1.BatchingPerCase, BatchPath: batch, ReadCase: readCase},
			ids: []string{"c", "bad", "a"}, want: []string{"a=answer a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := SourceFor(tc.out)
			_, isBatch := src.(Batch)
			if isBatch != tc.wantBatch || tc.out.PerCase() == tc.wantBatch {
				t.Fatalf("SourceFor(%+v) = %T, PerCase %v; want a batch source: %v", tc.out, src, tc.out.PerCase(), tc.wantBatch)
			}
			var got []string
			err := Responses(src, tc.ids, func(r *jsonlresult.Response) error {
				got = append(got, r.ID+"="+r.Text)
				return nil
			})
			if err != nil {
				t.Fatalf("Responses: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("responses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResponsesStopsOnError: fn's error ends the reading and is returned as it is, from either source.
func TestResponsesStopsOnError(t *testing.T) {
	dir := t.TempDir()
	batch := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(batch, []byte(`{"id":"a","text":"A"}`+"\n"+`{"id":"b","text":"B"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	for _, b := range []evalsv1alpha1.BatchingMode{evalsv1alpha1.BatchingBatched, evalsv1alpha1.BatchingPerCase} {
		src := SourceFor(Output{Batching: b, BatchPath: batch, ReadCase: func(id string) ([]byte, error) { return []byte(id), nil }})
		calls := 0
		err := Responses(src, []string{"a", "b"}, func(*jsonlresult.Response) error {
			calls++
			return stop
		})
		if !errors.Is(err, stop) || calls != 1 {
			t.Errorf("%s: Responses = %v after %d calls, want %v after 1", b, err, calls, stop)
		}
	}
}
