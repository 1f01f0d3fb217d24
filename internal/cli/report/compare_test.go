package report

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestWriteComparisonJudgeImages: a comparison says which judge image each side's code judges ran in, and none
// for runs without code judges.
func TestWriteComparisonJudgeImages(t *testing.T) {
	c := &Comparison{BaselineComparison: evalsv1alpha1.BaselineComparison{RunName: "nightly", EvalFile: evalsv1alpha1.EvalFileSame,
		BaselineJudgeImage: &evalsv1alpha1.JudgeImageStatus{Image: "runner:v1", Source: evalsv1alpha1.JudgeImageSourceTarget}},
		JudgeImage: &evalsv1alpha1.JudgeImageStatus{Image: "localhost/evalrun/judge:dev", Source: evalsv1alpha1.JudgeImageSourceDefault,
			ImageID: ptr.To("localhost/evalrun/judge@sha256:ab")}}
	var b strings.Builder
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	want := "Judge image: localhost/evalrun/judge:dev from Default, ran localhost/evalrun/judge@sha256:ab (baseline runner:v1 from Target)\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("comparison:\n%s\nwant the line %q", b.String(), want)
	}
	b.Reset()
	c.JudgeImage, c.BaselineJudgeImage = nil, nil
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Judge image") {
		t.Errorf("runs without code judges:\n%s\nwant no judge image line", b.String())
	}
}

// TestWriteComparisonPaired: the Paired test's result follows the counts: what was tested and left out, each
// metric's change with its interval, the p-value; without a case to test, only the counts.
func TestWriteComparisonPaired(t *testing.T) {
	c := &Comparison{BaselineComparison: evalsv1alpha1.BaselineComparison{RunName: "nightly", EvalFile: evalsv1alpha1.EvalFileSame,
		SharedCases: 12, MeanScore: "0.7000", BaselineMeanScore: "0.8000", MeanScoreDelta: "-0.1000", Test: evalsv1alpha1.BaselineTestPaired,
		Paired: &evalsv1alpha1.PairedComparison{Method: evalsv1alpha1.PairedMcNemarExact, Cases: 11, WorseCases: 4, BetterCases: 1,
			SkippedCases: 1, OnlyInRunCases: 2,
			PassRate:  &evalsv1alpha1.PairedEffect{Baseline: "0.8182", Run: "0.5455", Delta: "-0.2727", DeltaLow: "-0.5455", DeltaHigh: "-0.0909"},
			MeanScore: &evalsv1alpha1.PairedEffect{Baseline: "0.8000", Run: "0.7000", Delta: "-0.1000", DeltaLow: "-0.2000", DeltaHigh: "0.0000"},
			PValue:    "0.187500"}},
		Why: "pass rate fell ..."}
	var b strings.Builder
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	want := `EvalRun candidate against baseline nightly (eval file: Same), 12 shared cases
Newly failing: 0
Newly passing: 0
Missing in run: 0
Missing in baseline: 0
Mean score: 0.7000 (baseline 0.8000, delta -0.1000)
Paired test: McNemarExact over 11 cases (4 worse, 1 better); left out: 0 only in the baseline, 2 only in the run, 1 Skipped
Paired pass rate: 0.5455 (baseline 0.8182, delta -0.2727, 95% CI -0.5455 to -0.0909)
Paired mean score: 0.7000 (baseline 0.8000, delta -0.1000, 95% CI -0.2000 to 0.0000)
p-value (one-sided, the run worse): 0.187500
Result: not regressed: pass rate fell ...
`
	if b.String() != want {
		t.Errorf("comparison:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	c.Paired = &evalsv1alpha1.PairedComparison{OnlyInBaselineCases: 3}
	if err := WriteComparison(&b, "candidate", c); err != nil {
		t.Fatal(err)
	}
	if want := "Paired test: none (no case to test) over 0 cases (0 worse, 0 better); left out: 3 only in the baseline, 0 only in the run, 0 Skipped\nResult:"; !strings.Contains(b.String(), want) {
		t.Errorf("nothing to test:\n%s\nwant %q", b.String(), want)
	}
}
