package compare

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

var night0 = time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)

func night(i int) time.Time { return night0.Add(time.Duration(i) * 24 * time.Hour) }

// TestHistoryRecord: verdicts stay aligned with the runs (absent runs as -), a case new to the history is padded,
// a run is recorded once (by uid, and by scheduled time once its uid aged out), the history keeps the last K runs,
// and a case no kept run had is forgotten.
func TestHistoryRecord(t *testing.T) {
	type rec struct {
		uid      string
		at       int
		verdicts map[string]byte
		want     bool
	}
	for _, tc := range []struct {
		name string
		recs []rec
		want History
	}{
		{"aligned, padded and absent", []rec{
			{"u1", 1, map[string]byte{"a": 'P', "b": 'F'}, true},
			{"u2", 2, map[string]byte{"a": 'F', "c": 'E'}, true},
			{"u3", 3, map[string]byte{"a": 'P', "b": 'M', "c": 'S'}, true},
		}, History{Through: night(3), Runs: []string{"u1", "u2", "u3"}, Cases: map[string]string{"a": "PFP", "b": "F-M", "c": "-ES"}}},
		{"the same run twice, then an earlier one", []rec{
			{"u1", 1, map[string]byte{"a": 'P'}, true},
			{"u2", 2, map[string]byte{"a": 'F'}, true},
			{"u2", 2, map[string]byte{"a": 'P'}, false},
			{"u0", 1, map[string]byte{"a": 'P'}, false},
		}, History{Through: night(2), Runs: []string{"u1", "u2"}, Cases: map[string]string{"a": "PF"}}},
		{"hostile ids are kept as they are, over-long ones left out", []rec{
			{"u1", 1, map[string]byte{"a\n\"b\\": 'P', "": 'F', strings.Repeat("x", 257): 'P', "\x00é": 'E'}, true},
		}, History{Through: night(1), Runs: []string{"u1"}, Cases: map[string]string{"a\n\"b\\": "P", "": "F", "\x00é": "E"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &History{}
			for _, r := range tc.recs {
				if got := h.Record(r.uid, night(r.at), r.verdicts); got != r.want {
					t.Errorf("Record(%s) = %v, want %v", r.uid, got, r.want)
				}
			}
			if diff := cmp.Diff(&tc.want, h); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			data, err := h.Encode(HistoryBudget)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeHistory(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(h, back); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistoryKeepsLastK: after K+5 runs the history holds the last K, and a case only the first five had is gone.
func TestHistoryKeepsLastK(t *testing.T) {
	h := &History{}
	for i := range HistoryRuns + 5 {
		v := map[string]byte{"always": "PF"[i%2]}
		if i < 5 {
			v["early"] = 'P'
		}
		h.Record(fmt.Sprintf("u%d", i), night(i), v)
	}
	want := &History{Through: night(HistoryRuns + 4), Cases: map[string]string{"always": strings.Repeat("FP", HistoryRuns/2)}}
	for i := 5; i < HistoryRuns+5; i++ {
		want.Runs = append(want.Runs, fmt.Sprintf("u%d", i))
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if h.Record("u3", night(3), map[string]byte{"always": 'P'}) {
		t.Error("a run older than the kept ones was recorded again")
	}
}

// TestHistoryBudget: a history over its budget keeps the cases it had before and drops new ones first, counting
// them; the encoding fits.
func TestHistoryBudget(t *testing.T) {
	h := &History{}
	old := map[string]byte{}
	for i := range 50 {
		old[fmt.Sprintf("old-%03d", i)] = 'P'
	}
	h.Record("u1", night(1), old)
	next := map[string]byte{}
	for id := range old {
		next[id] = 'F'
	}
	for i := range 2000 {
		next[fmt.Sprintf("new-%x-%d", i*7919, i)] = 'P'
	}
	h.Record("u2", night(2), next)
	const budget = 4 << 10
	data, err := h.Encode(budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > budget {
		t.Errorf("encoded %d bytes, over the budget %d", len(data), budget)
	}
	for id := range old {
		if h.Cases[id] != "PF" {
			t.Errorf("case %s with history has %q after the cut", id, h.Cases[id])
		}
	}
	if kept := len(h.Cases) - len(old); h.Dropped != 2000-kept || h.Dropped == 0 {
		t.Errorf("dropped %d, kept %d new cases of 2000", h.Dropped, kept)
	}
	back, err := DecodeHistory(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, back); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	if _, err := (&History{Runs: []string{strings.Repeat("u", 100)}}).Encode(10); err == nil {
		t.Error("a history that cannot fit encoded without error")
	}
}

// TestDecodeHistoryRefuses: what a hand-edited or truncated ConfigMap may hold is refused with what is wrong.
func TestDecodeHistoryRefuses(t *testing.T) {
	enc := func(s string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte("{}"), "not gzip'd"},
		{"not JSON", enc("{"), "not valid JSON"},
		{"another format", enc(`{"format":2}`), "format 2"},
		{"misaligned", enc(`{"format":1,"runs":["u1","u2"],"cases":{"a":"P"}}`), `case "a" has verdicts "P"`},
		{"unknown verdict", enc(`{"format":1,"runs":["u1"],"cases":{"a":"X"}}`), `case "a" has verdicts "X"`},
		{"too many runs", enc(`{"format":1,"runs":[` + strings.Repeat(`"u",`, HistoryRuns) + `"u"]}`), "31 runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeHistory(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeHistory: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if h, err := DecodeHistory(nil); err != nil || len(h.Runs) != 0 {
		t.Errorf("DecodeHistory(nil) = %+v, %v; want an empty history", h, err)
	}
}

func TestFlips(t *testing.T) {
	for _, tc := range []struct {
		verdicts          string
		flips, runs       int
		rate              string
		quarantinedOver03 bool
	}{
		{"", 0, 0, "0", false},
		{"P", 0, 1, "0", false},
		{"PF", 1, 2, "1", false},
		{"PPPPPPPPPF", 1, 10, "1/9", false},
		{"PFPFP", 4, 5, "1", true},
		{"PFFFP", 2, 5, "1/2", true},
		{"PEMF", 1, 4, "1/3", true},
		{"PPPFPPPPPP", 2, 10, "2/9", false},
		{"P-S-F-SP", 2, 3, "1", true},
		{"FEMFEM", 0, 6, "0", false},
		{"SS--", 0, 0, "0", false},
	} {
		t.Run(tc.verdicts, func(t *testing.T) {
			f, r := Flips(tc.verdicts)
			rate := FlipRate(f, r)
			if diff := cmp.Diff([]any{tc.flips, tc.runs, tc.rate}, []any{f, r, rate.RatString()}); diff != "" {
				t.Errorf("Flips, FlipRate (-want +got):\n%s", diff)
			}
			h := &History{Runs: make([]string, len(tc.verdicts)), Cases: map[string]string{"c": tc.verdicts}}
			if got := h.Quarantined(big.NewRat(3, 10))["c"]; got != tc.quarantinedOver03 {
				t.Errorf("quarantined over 0.3: %v, want %v", got, tc.quarantinedOver03)
			}
		})
	}
}

func TestFlakiestAndBefore(t *testing.T) {
	h := &History{Runs: []string{"u1", "u2", "u3", "u4"}, Cases: map[string]string{
		"steady": "PPPP", "b": "PFPF", "a": "FPFP", "once": "PPPF", "twice-slow": "P-FP", "skipped": "SSSS",
	}}
	got := h.Flakiest(3)
	want := []Flaky{{"a", 3, 4, big.NewRat(1, 1)}, {"b", 3, 4, big.NewRat(1, 1)}, {"twice-slow", 2, 3, big.NewRat(1, 1)}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y *big.Rat) bool { return x.Cmp(y) == 0 })); diff != "" {
		t.Errorf("Flakiest (-want +got):\n%s", diff)
	}
	before := h.Before("u4")
	if diff := cmp.Diff(map[string]string{"steady": "PPP", "b": "PFP", "a": "FPF", "once": "PPP", "twice-slow": "P-F", "skipped": "SSS"},
		before.Cases); diff != "" {
		t.Errorf("Before(u4) (-want +got):\n%s", diff)
	}
	if h.Before("other") != h {
		t.Error("Before a run not recorded is not the history itself")
	}
}

// TestVerdicts: a run's case verdicts, one trial (the first line of an id wins) and over trials (its rule).
func TestVerdicts(t *testing.T) {
	one := NewVerdicts(results.TrialRule{Count: 1})
	for _, l := range []*results.Line{line("p", verdict.VerdictPass, 1), line("p", verdict.VerdictFail, 0), line("f", verdict.VerdictFail, 0),
		line("e", verdict.VerdictError, 0), line("s", verdict.VerdictSkipped, 0), missing("m")} {
		one.Add(l)
	}
	if diff := cmp.Diff(map[string]byte{"p": 'P', "f": 'F', "e": 'E', "s": 'S', "m": 'M'}, one.Finish()); diff != "" {
		t.Errorf("one trial (-want +got):\n%s", diff)
	}
	rule, err := results.ParseTrialRule(3, "0.6")
	if err != nil {
		t.Fatal(err)
	}
	three := NewVerdicts(rule)
	for _, l := range []*results.Line{
		trialLine("two-of-three", 1, verdict.VerdictPass, 1), trialLine("two-of-three", 2, verdict.VerdictPass, 1), trialLine("two-of-three", 3, verdict.VerdictFail, 0),
		trialLine("one-of-three", 1, verdict.VerdictPass, 1), trialLine("one-of-three", 2, verdict.VerdictFail, 0), trialLine("one-of-three", 3, verdict.VerdictFail, 0),
	} {
		three.Add(l)
	}
	if diff := cmp.Diff(map[string]byte{"two-of-three": 'P', "one-of-three": 'F'}, three.Finish()); diff != "" {
		t.Errorf("three trials (-want +got):\n%s", diff)
	}
}

// TestQuarantine: quarantined cases are left out of both tests, listed (bounded) and counted; a flaky case that
// fails now is no newly failing case, and Paired sees only the cases left.
func TestQuarantine(t *testing.T) {
	b := NewBuilder(1)
	b.Quarantine(map[string]bool{"flaky-1": true, "flaky-2": true})
	for _, l := range []*results.Line{line("steady", verdict.VerdictPass, 1), line("flaky-1", verdict.VerdictPass, 1), line("flaky-2", verdict.VerdictPass, 1),
		line("fails", verdict.VerdictPass, 1)} {
		b.AddBaseline(l)
	}
	for _, l := range []*results.Line{line("steady", verdict.VerdictPass, 1), line("flaky-1", verdict.VerdictFail, 0), line("flaky-2", verdict.VerdictFail, 0),
		line("fails", verdict.VerdictFail, 0)} {
		b.AddRun(l)
	}
	c := b.Finish()
	st := c.Status()
	want := evalsv1alpha1.BaselineComparison{SharedCases: 2, NewlyFailing: []string{"fails"}, NewlyFailingCount: 1,
		Quarantined: []string{"flaky-1"}, QuarantinedCount: 2, MeanScore: "0.5000", BaselineMeanScore: "1.0000", MeanScoreDelta: "-0.5000"}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	d, err := c.Decide(Bounds{Test: evalsv1alpha1.BaselineTestCount, MaxNewFailures: 1})
	if err != nil || d.Regressed {
		t.Errorf("Count with one newly failing case allowed: %+v, %v", d, err)
	}
	p, err := c.Decide(pairedBounds("0.05", "0"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Paired == nil || p.Paired.Cases != 2 {
		t.Errorf("Paired over %+v; want the 2 cases not quarantined", p.Paired)
	}
}

// FuzzDecodeHistory: whatever a history ConfigMap holds, DecodeHistory returns an error or a history that Record
// keeps aligned and that encodes and decodes to itself.
func FuzzDecodeHistory(f *testing.F) {
	h := &History{}
	h.Record("u1", night(1), map[string]byte{"a": 'P', "b": 'F'})
	data, err := h.Encode(HistoryBudget)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHistory(data)
		if err != nil {
			return
		}
		h.Record("fuzz", night(100), map[string]byte{"a": 'F'})
		for id, v := range h.Cases {
			if len(v) != len(h.Runs) {
				t.Fatalf("case %q has %d verdicts for %d runs", id, len(v), len(h.Runs))
			}
		}
		out, err := h.Encode(HistoryBudget)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeHistory(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// BenchmarkHistoryRecordEncode records the 30th run of a 20,000-case suite whose cases flip now and then and
// encodes the history, reporting its encoded size (what the ConfigMap holds).
func BenchmarkHistoryRecordEncode(b *testing.B) {
	const cases = 20_000
	base := &History{}
	for r := range HistoryRuns - 1 {
		v := make(map[string]byte, cases)
		for i := range cases {
			v[fmt.Sprintf("suite/area-%02d/case-%05d", i%37, i)] = "PPPPPPPF"[(i*7+r*13)%8]
		}
		base.Record(fmt.Sprintf("00000000-0000-0000-0000-%012d", r), night(r), v)
	}
	last := make(map[string]byte, cases)
	for id := range base.Cases {
		last[id] = 'P'
	}
	data, err := base.encode()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		h, err := DecodeHistory(data)
		if err != nil {
			b.Fatal(err)
		}
		h.Record("last", night(HistoryRuns), last)
		out, err := h.Encode(HistoryBudget)
		if err != nil || h.Dropped != 0 {
			b.Fatalf("encode: %v, %d dropped", err, h.Dropped)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/history")
}
