package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr(f float64) *float64 { return &f }

func TestDecide(t *testing.T) {
	tests := []struct {
		name        string
		row         row
		wantDec     string
		wantReasons []string
	}{
		{name: "small", row: row{Amount: ptr(5000), OriginCountry: "NZ"}, wantDec: "CLEAR", wantReasons: []string{}},
		{name: "threshold", row: row{Amount: ptr(10000), OriginCountry: "AU"}, wantDec: "REVIEW",
			wantReasons: []string{"amount 10000.00 at or above the 10000 reporting threshold"}},
		{name: "below threshold", row: row{Amount: ptr(9999.99), OriginCountry: "NZ"}, wantDec: "CLEAR", wantReasons: []string{}},
		{name: "high risk lower case", row: row{Amount: ptr(1), OriginCountry: "ir"}, wantDec: "REVIEW",
			wantReasons: []string{"high-risk origin country IR"}},
		{name: "watchlist and pep", row: row{Name: " Ivan Sanctioned ", Amount: ptr(1), PEP: true}, wantDec: "REVIEW",
			wantReasons: []string{"politically exposed person", "watchlist match"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, reasons := decide(tt.row)
			if diff := cmp.Diff([]any{tt.wantDec, tt.wantReasons}, []any{dec, reasons}); diff != "" {
				t.Errorf("decide mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type outLine struct {
	ID       string
	Decision string
	Tools    []string
}

func readOutput(t *testing.T, path string) ([]outLine, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var recs []outLine
	var invalid []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			invalid = append(invalid, sc.Text())
			continue
		}
		var ans struct{ Decision string }
		if err := json.Unmarshal([]byte(r.Text), &ans); err != nil {
			t.Fatalf("record %s: text is not JSON: %v", r.ID, err)
		}
		l := outLine{ID: r.ID, Decision: ans.Decision}
		for _, c := range r.OutputMessages[0].ToolCalls {
			l.Tools = append(l.Tools, c.Tool)
		}
		recs = append(recs, l)
	}
	return recs, invalid
}

var (
	clearTools  = []string{"watchlist_lookup", "screening_check"}
	reviewTools = []string{"watchlist_lookup", "screening_check", "create_review_ticket"}
)

func TestRunSampleEvalFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--eval", "../eval.yaml", "--output", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("run exit %d, stderr: %s", code, stderr.String())
	}
	got, invalid := readOutput(t, out)
	want := []outLine{
		{"case-001", "CLEAR", clearTools}, {"case-002", "REVIEW", reviewTools}, {"case-003", "CLEAR", clearTools},
		{"case-004", "REVIEW", reviewTools}, {"case-005", "REVIEW", reviewTools}, {"case-006", "REVIEW", reviewTools},
		{"case-007", "REVIEW", reviewTools}, {"case-008", "CLEAR", clearTools}, {"case-009", "CLEAR", clearTools},
		{"case-010", "CLEAR", clearTools}, {"case-011", "CLEAR", clearTools},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
	if len(invalid) != 0 {
		t.Errorf("invalid lines: %q", invalid)
	}
	if !strings.Contains(stderr.String(), "skipping case-012: row has no numeric amount") {
		t.Errorf("stderr does not explain the skipped case: %q", stderr.String())
	}
}

func TestRunKnobs(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		wantCode    int
		wantIDs     []string
		wantInvalid int
		wantStderr  string
	}{
		{name: "fail after 3", args: []string{"--fail-after", "3", "--exit-code", "7"}, wantCode: 7,
			wantIDs: []string{"case-001", "case-002", "case-003"}, wantStderr: "simulated failure after 3 records"},
		{name: "fail after 0", args: []string{"--fail-after", "0"}, wantCode: 1, wantStderr: "simulated failure after 0 records"},
		{name: "invalid line and duplicate", args: []string{"--invalid-line"}, wantIDs: []string{
			"case-001", "case-001", "case-002", "case-003", "case-004", "case-005", "case-006", "case-007", "case-008",
			"case-009", "case-010", "case-011"}, wantInvalid: 1},
		{name: "synthetic", args: []string{"--synthetic", "3"}, wantIDs: []string{"synthetic-00001", "synthetic-00002", "synthetic-00003"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"--eval", "../eval.yaml", "--output", out}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			recs, invalid := readOutput(t, out)
			var ids []string
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("ids mismatch (-want +got):\n%s", diff)
			}
			if len(invalid) != tt.wantInvalid {
				t.Errorf("%d invalid lines, want %d", len(invalid), tt.wantInvalid)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestHealthcheckAndUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--healthcheck"}, &stdout, &stderr); code != 0 || stdout.String() != "screening-runner: healthy\n" {
		t.Errorf("healthcheck: exit %d, stdout %q", code, stdout.String())
	}
	t.Setenv("OUTPUT_FILE", "")
	t.Setenv("EVAL_FILE", "")
	stderr.Reset()
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--output") {
		t.Errorf("no flags: exit %d, stderr %q", code, stderr.String())
	}
}

func TestRunOneCase(t *testing.T) {
	tests := []struct {
		id       string
		wantCode int
		wantOut  string
	}{
		{id: "case-002", wantOut: `{"decision":"REVIEW","reasons":["amount 25000.00 at or above the 10000 reporting threshold"],"row_id":"case-002"}`},
		{id: "case-012", wantCode: 3},
		{id: "nope", wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.id+".out")
			var stdout, stderr bytes.Buffer
			code := run([]string{"--eval", "../eval.yaml", "--case", tt.id, "--output", out}, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.wantCode, stderr.String())
			}
			if tt.wantOut == "" {
				return
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var r record
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatalf("output is not one JSON object: %v", err)
			}
			if diff := cmp.Diff(tt.wantOut, r.Text); diff != "" {
				t.Errorf("text mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFlipCase: --flip-case answers that one case with the opposite decision (a regressed model) and leaves the
// others as they were.
func TestFlipCase(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--eval", "../eval.yaml", "--output", out, "--flip-case", "case-004"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run exit %d, stderr: %s", code, stderr.String())
	}
	got, _ := readOutput(t, out)
	decisions := map[string]string{}
	for _, l := range got {
		decisions[l.ID] = l.Decision
	}
	if decisions["case-004"] != "CLEAR" || decisions["case-002"] != "REVIEW" || decisions["case-001"] != "CLEAR" {
		t.Errorf("decisions %v: want case-004 flipped to CLEAR, the others unchanged", decisions)
	}
}

// TestFlipCases: --flip-case takes several ids, comma-separated, and flips each of them only.
func TestFlipCases(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.jsonl")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--eval", "../eval.yaml", "--output", out, "--flip-case", "case-004,case-001"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run exit %d, stderr: %s", code, stderr.String())
	}
	got, _ := readOutput(t, out)
	decisions := map[string]string{}
	for _, l := range got {
		decisions[l.ID] = l.Decision
	}
	if decisions["case-004"] != "CLEAR" || decisions["case-001"] != "REVIEW" || decisions["case-002"] != "REVIEW" {
		t.Errorf("decisions %v: want case-004 flipped to CLEAR, case-001 to REVIEW, case-002 unchanged", decisions)
	}
}
