package report

import (
	"fmt"
	"io"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Comparison is the document `compare -o json|yaml` writes: status.baseline's shape (every id, not bounded) and
// the verdict against the bounds given.
type Comparison struct {
	evalsv1alpha1.BaselineComparison `json:",inline"`
	// Regressed is true when the run exceeds the bounds; Why says why (or why not) in one line.
	Regressed bool   `json:"regressed"`
	Why       string `json:"why"`
	// JudgeImage is the judge image this run's code judges ran in (its status.judgeImage; the baseline's is
	// baselineJudgeImage), unset without code judges.
	JudgeImage *evalsv1alpha1.JudgeImageStatus `json:"judgeImage,omitempty"`
}

// judgeImageText is a judge image for people: the name, its source and, when the kubelet reported it, the digest.
func judgeImageText(j *evalsv1alpha1.JudgeImageStatus) string {
	if j == nil {
		return "none: no code judges"
	}
	s := fmt.Sprintf("%s from %s", j.Image, j.Source)
	if j.ImageID != nil {
		s += ", ran " + *j.ImageID
	}
	return s
}

// WriteComparison writes a comparison for people: the counts, each id list, the mean scores, the Paired test's
// result (spec.baseline.test: Paired) and the verdict.
func WriteComparison(w io.Writer, run string, c *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "EvalRun %s against baseline %s (eval file: %s), %d shared cases\n", run, c.RunName, c.EvalFile, c.SharedCases)
	if c.JudgeImage != nil || c.BaselineJudgeImage != nil {
		fmt.Fprintf(&b, "Judge image: %s (baseline %s)\n", judgeImageText(c.JudgeImage), judgeImageText(c.BaselineJudgeImage))
	}
	list := func(title string, count int32, ids []string) {
		fmt.Fprintf(&b, "%s: %d\n", title, count)
		for _, id := range ids {
			fmt.Fprintf(&b, "  %s\n", id)
		}
	}
	list("Newly failing", c.NewlyFailingCount, c.NewlyFailing)
	list("Newly passing", c.NewlyPassingCount, c.NewlyPassing)
	list("Missing in run", c.MissingInRunCount, c.MissingInRun)
	list("Missing in baseline", c.MissingInBaselineCount, c.MissingInBaseline)
	if c.MeanScore != "" {
		fmt.Fprintf(&b, "Mean score: %s (baseline %s, delta %s)\n", c.MeanScore, c.BaselineMeanScore, c.MeanScoreDelta)
	} else {
		b.WriteString("Mean score: no shared scored cases\n")
	}
	if p := c.Paired; p != nil {
		writePaired(&b, p)
	}
	verdict := "not regressed"
	if c.Regressed {
		verdict = "REGRESSED"
	}
	fmt.Fprintf(&b, "Result: %s: %s\n", verdict, c.Why)
	_, err := io.WriteString(w, b.String())
	return err
}

// writePaired writes the Paired test's result: what was tested, each metric's change with its interval, the
// p-value.
func writePaired(b *strings.Builder, p *evalsv1alpha1.PairedComparison) {
	method := string(p.Method)
	if method == "" {
		method = "none (no case to test)"
	}
	fmt.Fprintf(b, "Paired test: %s over %d cases (%d worse, %d better); left out: %d only in the baseline, %d only in the run, %d Skipped\n",
		method, p.Cases, p.WorseCases, p.BetterCases, p.OnlyInBaselineCases, p.OnlyInRunCases, p.SkippedCases)
	effect := func(name string, e *evalsv1alpha1.PairedEffect) {
		if e != nil {
			fmt.Fprintf(b, "%s: %s (baseline %s, delta %s, 95%% CI %s to %s)\n", name, e.Run, e.Baseline, e.Delta, e.DeltaLow, e.DeltaHigh)
		}
	}
	effect("Paired pass rate", p.PassRate)
	effect("Paired mean score", p.MeanScore)
	if p.PValue != "" {
		fmt.Fprintf(b, "p-value (one-sided, the run worse): %s\n", p.PValue)
	}
}
