package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// recordingSink records what the pipeline hands it, in commit order, and counts concurrent Prepare calls.
type recordingSink struct {
	committed []string
	inFlight  atomic.Int32
	maxFlight atomic.Int32
	failOn    string
}

type rec struct {
	id      string
	verdict verdict.Verdict
	score   float64
	missing bool
	answer  string
	err     string
}

func (s *recordingSink) Prepare(buf *[]byte, c Case) (rec, error) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxFlight.Load(); n > m && !s.maxFlight.CompareAndSwap(m, n); m = s.maxFlight.Load() {
	}
	if c.Result.ID == s.failOn {
		return rec{}, fmt.Errorf("sink refuses %s", c.Result.ID)
	}
	*buf = append(*buf, c.Result.ID...)
	r := rec{id: c.Result.ID, verdict: c.Result.Verdict, score: c.Result.Score, missing: c.Result.Missing, err: c.Result.Error}
	if c.Response != nil {
		r.answer = c.Response.Text
	}
	return r, nil
}

func (s *recordingSink) Commit(r rec) error {
	s.committed = append(s.committed, fmt.Sprintf("%s:%s:%s", r.id, r.verdict, r.answer))
	return nil
}

const evalYAML = `$schema: agentv-eval-v2
description: pipeline
evalcases:
  - id: a
    input_messages: [{role: user, content: "question a"}]
    expected_messages: [{role: assistant, content: {decision: "yes"}}]
    evaluators:
      - {name: decision, type: field_accuracy, fields: [{path: decision, match: exact}]}
  - id: b
    input_messages: [{role: user, content: "question b"}]
    expected_messages: [{role: assistant, content: {decision: "yes"}}]
    evaluators:
      - {name: decision, type: field_accuracy, fields: [{path: decision, match: exact}]}
  - id: c
    input_messages: [{role: user, content: "question c"}]
`

func parseEval(t *testing.T) *evalfile.File {
	t.Helper()
	f, err := evalfile.Parse([]byte(evalYAML))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBatchOrderMissingUnexpectedAndJudging(t *testing.T) {
	dir := t.TempDir()
	// b first, a second; a duplicate of b (a line error); an unexpected id; c is missing.
	out := writeFile(t, dir, "out.jsonl", `{"id":"b","text":"{\"decision\":\"no\"}"}`+"\n"+
		`{"id":"zz","text":"who asked"}`+"\n"+
		`{"id":"a","text":"{\"decision\":\"yes\"}"}`+"\n"+
		`{"id":"b","text":"forged second answer"}`+"\n")
	in := Input{IDs: []string{"a", "b", "c"}, File: parseEval(t), Judge: &evaluate.Judge{Threshold: 0.8},
		MissingReasons: map[string]string{"c": "the launcher reports that case c's invocation exited with code 3"}}
	sink := &recordingSink{}
	res, err := Run(context.Background(), in, Batch{Path: out}, sink)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`b:Fail:{"decision":"no"}`, `a:Pass:{"decision":"yes"}`, "c:Error:"}
	if diff := cmp.Diff(want, sink.committed); diff != "" {
		t.Errorf("commit order (-want +got):\n%s", diff)
	}
	if res.Requested != 3 || res.Present != 2 || res.MissingCount != 1 || !cmp.Equal(res.MissingIDs, []string{"c"}) ||
		res.UnexpectedCount != 1 || res.ParseErrorCount != 1 || res.ParseErrors[0].Line != 4 || res.OK() || res.OutputSHA256 == "" {
		t.Errorf("result %+v", res)
	}
	s := res.Summary
	if s.Total != 3 || s.Passed != 1 || s.Failed != 1 || s.Errored != 1 || s.Missing != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestMissingReasonReplacesTheError(t *testing.T) {
	in := Input{IDs: []string{"c"}, File: parseEval(t), Judge: &evaluate.Judge{Threshold: 0.8},
		MissingReasons: map[string]string{"c": "the invocation exited with code 3"}}
	sink := &errSink{}
	if _, err := Run(context.Background(), in, PerCase{Read: func(string) ([]byte, error) { return nil, os.ErrNotExist }}, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.results) != 1 || sink.results[0].Error != "the invocation exited with code 3" || !sink.results[0].Missing {
		t.Errorf("results %+v", sink.results)
	}
}

type errSink struct{ results []verdict.CaseResult }

func (s *errSink) Prepare(_ *[]byte, c Case) (verdict.CaseResult, error) { return c.Result, nil }
func (s *errSink) Commit(r verdict.CaseResult) error {
	s.results = append(s.results, r)
	return nil
}

func TestNoOutputFile(t *testing.T) {
	in := Input{IDs: []string{"a", "b"}}
	sink := &recordingSink{}
	res, err := Run(context.Background(), in, Batch{Path: filepath.Join(t.TempDir(), "absent.jsonl")}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NoOutput || !strings.Contains(res.NoOutputErr.Error(), "the runner wrote no output file") || res.MissingCount != 2 || res.OK() {
		t.Errorf("result %+v", res)
	}
	// Without judging, cases carry no verdict.
	if diff := cmp.Diff([]string{"a::", "b::"}, sink.committed); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
}

func TestPerCaseReadErrorsAreCaseErrors(t *testing.T) {
	files := map[string]string{"a": `{"text":"{\"decision\":\"yes\"}"}`, "c": "plain answer"}
	read := func(id string) ([]byte, error) {
		if id == "b" {
			return nil, errors.New("the output is a FIFO, not a regular file")
		}
		return []byte(files[id]), nil
	}
	in := Input{IDs: []string{"a", "b", "c"}, File: parseEval(t), Judge: &evaluate.Judge{Threshold: 0.8}}
	sink := &recordingSink{}
	res, err := Run(context.Background(), in, PerCase{Read: read}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if res.Present != 2 || res.MissingCount != 0 || res.ParseErrorCount != 1 || res.ParseErrors[0].Line != 0 ||
		!strings.Contains(res.ParseErrors[0].Message, "case b: the output is a FIFO") {
		t.Errorf("result %+v", res)
	}
	// c has no evaluator of its own and no defaults: skipped.
	want := []string{`a:Pass:{"decision":"yes"}`, "b:Error:", "c:Skipped:plain answer"}
	if diff := cmp.Diff(want, sink.committed); diff != "" {
		t.Errorf("commits (-want +got):\n%s", diff)
	}
	// The digest covers ids, lengths and bytes: another split of the same bytes differs.
	files["a"], files["c"] = files["a"]+"plain", " answer"
	res2, err := Run(context.Background(), in, PerCase{Read: read}, &recordingSink{})
	if err != nil {
		t.Fatal(err)
	}
	if res2.OutputSHA256 == res.OutputSHA256 {
		t.Errorf("different per-case outputs share the digest %s", res.OutputSHA256)
	}
}

func TestManyCasesCommitInOutputOrderWithWorkers(t *testing.T) {
	const n = 3*batchSize + 17
	var ids []string
	var out strings.Builder
	for i := range n {
		ids = append(ids, fmt.Sprintf("case-%04d", i))
	}
	// Output in reverse order, every seventh case missing.
	var wantOrder []string
	for i := n - 1; i >= 0; i-- {
		if i%7 == 0 {
			continue
		}
		fmt.Fprintf(&out, `{"id":%q,"text":"t%d"}`+"\n", ids[i], i)
		wantOrder = append(wantOrder, fmt.Sprintf("%s::t%d", ids[i], i))
	}
	for i := 0; i < n; i += 7 {
		wantOrder = append(wantOrder, ids[i]+"::")
	}
	path := writeFile(t, t.TempDir(), "out.jsonl", out.String())
	sink := &recordingSink{}
	res, err := Run(context.Background(), Input{IDs: ids, Workers: 4, MaxListed: 5}, Batch{Path: path}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantOrder, sink.committed); diff != "" {
		t.Errorf("commit order (-want +got):\n%s", diff)
	}
	if res.MissingCount != (n+6)/7 || len(res.MissingIDs) != 5 {
		t.Errorf("missing %d listed %d", res.MissingCount, len(res.MissingIDs))
	}
}

// bytesSink keeps what Prepare wrote to its buffer until Commit, and checks it is still there: buffers are
// reused only for batches whose cases are all committed.
type bytesSink struct {
	committed int
	firstBad  string
}

type preparedBytes struct {
	want string // a copy of what Prepare wrote
	got  []byte // where it wrote it
}

func (s *bytesSink) Prepare(buf *[]byte, c Case) (preparedBytes, error) {
	text := c.Result.ID
	if c.Response != nil {
		text += "=" + c.Response.Text
	}
	start := len(*buf)
	*buf = append(*buf, text...)
	return preparedBytes{want: strings.Clone(text), got: (*buf)[start:len(*buf):len(*buf)]}, nil
}

func (s *bytesSink) Commit(p preparedBytes) error {
	s.committed++
	if string(p.got) != p.want && s.firstBad == "" {
		s.firstBad = fmt.Sprintf("commit %d: prepared %q, now %q", s.committed, p.want, p.got)
	}
	return nil
}

func TestPreparedBytesLastUntilCommit(t *testing.T) {
	// Enough batches that every buffer serves several, with answers of many lengths so that buffers grow.
	const n = 40 * batchSize
	var out strings.Builder
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("case-%05d", i)
		if i%11 != 0 { // every eleventh case missing
			fmt.Fprintf(&out, `{"id":%q,"text":%q}`+"\n", ids[i], strings.Repeat(string(rune('a'+i%26)), i%97))
		}
	}
	path := writeFile(t, t.TempDir(), "out.jsonl", out.String())
	for _, workers := range []int{1, 3, 8} {
		sink := &bytesSink{}
		if _, err := Run(context.Background(), Input{IDs: ids, Workers: workers}, Batch{Path: path}, sink); err != nil {
			t.Fatal(err)
		}
		if sink.firstBad != "" || sink.committed != n {
			t.Errorf("%d workers: %d of %d committed; %s", workers, sink.committed, n, sink.firstBad)
		}
	}
}

func TestSinkErrorStopsTheRun(t *testing.T) {
	var out strings.Builder
	var ids []string
	for i := range 2 * batchSize {
		id := fmt.Sprintf("c%d", i)
		ids = append(ids, id)
		fmt.Fprintf(&out, `{"id":%q,"text":"x"}`+"\n", id)
	}
	path := writeFile(t, t.TempDir(), "out.jsonl", out.String())
	_, err := Run(context.Background(), Input{IDs: ids, Workers: 2}, Batch{Path: path}, &recordingSink{failOn: "c3"})
	if err == nil || !strings.Contains(err.Error(), "sink refuses c3") {
		t.Errorf("err = %v, want the sink's error", err)
	}
}

func TestCancelledContextStopsReading(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := writeFile(t, t.TempDir(), "out.jsonl", `{"id":"a","text":"x"}`+"\n")
	if _, err := Run(ctx, Input{IDs: []string{"a"}}, Batch{Path: path}, &recordingSink{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, err := Run(ctx, Input{IDs: []string{"a"}}, PerCase{Read: func(string) ([]byte, error) { return nil, nil }}, &recordingSink{}); !errors.Is(err, context.Canceled) {
		t.Errorf("per case: err = %v, want context.Canceled", err)
	}
}

func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "f", "0123456789")
	if b, err := ReadBounded(p, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	if b, err := ReadBounded(p, 9); err == nil || len(b) != 9 || !strings.Contains(err.Error(), "larger than the limit of 9 bytes") {
		t.Errorf("above the limit: %q, %v", b, err)
	}
	if _, err := ReadBounded(filepath.Join(dir, "absent"), 9); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	if _, err := ReadBounded(dir, 9); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("a directory: %v", err)
	}
}

// TestLoadFileWhileReading: an eval file loaded while the output is read (Input.LoadFile) judges as the same file
// given up front, when it arrives after the output has been read, for present and missing cases, on one worker or
// several; a load that fails ends the run with its error, whatever the output.
func TestLoadFileWhileReading(t *testing.T) {
	dir := t.TempDir()
	out := writeFile(t, dir, "out.jsonl", `{"id":"b","text":"{\"decision\":\"no\"}"}`+"\n"+
		`{"id":"a","text":"{\"decision\":\"yes\"}"}`+"\n")
	given := &recordingSink{}
	in := Input{IDs: []string{"a", "b", "c"}, File: parseEval(t), Judge: &evaluate.Judge{Threshold: 0.8}}
	want, err := Run(context.Background(), in, Batch{Path: out}, given)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			read := make(chan struct{})
			loaded := &recordingSink{}
			in := Input{IDs: []string{"a", "b", "c"}, Judge: &evaluate.Judge{Threshold: 0.8}, Workers: workers,
				LoadFile: func() (*evalfile.File, error) {
					<-read // arrives only once the whole output has been read
					return parseEval(t), nil
				}}
			src := sourceFunc(func(ctx context.Context, r *run) error {
				err := Batch{Path: out}.read(ctx, r)
				close(read)
				return err
			})
			got, err := Run(context.Background(), in, src, loaded)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(given.committed, loaded.committed); diff != "" {
				t.Errorf("committed (-file given +file loaded):\n%s", diff)
			}
			if diff := cmp.Diff(want.Summary, got.Summary); diff != "" {
				t.Errorf("summary (-file given +file loaded):\n%s", diff)
			}
		})
	}
	for name, src := range map[string]Source{"with output": Batch{Path: out}, "without output": Batch{Path: filepath.Join(dir, "none")}} {
		t.Run("load fails "+name, func(t *testing.T) {
			in := Input{IDs: []string{"a", "b", "c"}, Judge: &evaluate.Judge{Threshold: 0.8},
				LoadFile: func() (*evalfile.File, error) { return nil, errors.New("eval file: line 3: not valid YAML") }}
			if _, err := Run(context.Background(), in, src, &recordingSink{}); err == nil || !strings.Contains(err.Error(), "line 3: not valid YAML") {
				t.Errorf("err = %v, want the load's error", err)
			}
		})
	}
}

// sourceFunc is a Source made of a function (to wrap another source).
type sourceFunc func(ctx context.Context, r *run) error

func (f sourceFunc) read(ctx context.Context, r *run) error { return f(ctx, r) }

func (f sourceFunc) each([]string, func(*jsonlresult.Response) error) error {
	return errors.New("sourceFunc reads only through Run")
}
