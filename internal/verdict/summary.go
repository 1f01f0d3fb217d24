package verdict

import (
	"sort"
)

// HistogramBins is the API's HistogramBins (TestSpelledAsTheAPI keeps the two equal).
const HistogramBins = 5

// Summary counts a run's judged cases.
type Summary struct {
	// Total is every case added; each is counted once more as passed, failed, errored or skipped.
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Skipped int `json:"skipped"`
	// Missing counts the errored cases that had no record (MissingCase).
	Missing int `json:"missing"`
	// BudgetUnjudged counts the errored cases the LLM judging budget left unjudged (CaseResult.BudgetUnjudged).
	BudgetUnjudged int `json:"budgetUnjudged,omitempty"`
	// Judged is Passed + Failed: the cases the score statistics cover.
	Judged int `json:"judged"`
	// MeanScore, MedianScore, MinScore and MaxScore are over the judged cases; 0 when none.
	MeanScore   float64 `json:"meanScore"`
	MedianScore float64 `json:"medianScore"`
	MinScore    float64 `json:"minScore"`
	MaxScore    float64 `json:"maxScore"`
	// Histogram counts judged scores in five bins: [0,0.2) [0.2,0.4) [0.4,0.6) [0.6,0.8) [0.8,1].
	Histogram [HistogramBins]int `json:"histogram"`
	// ModelUsage adds up every case's model usage (LLM judges); zero when no model was called.
	ModelUsage Usage `json:"modelUsage,omitzero"`
}

// PassRate is Passed / Total (0 when there are no cases).
func (s Summary) PassRate() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Passed) / float64(s.Total)
}

// SummaryBuilder accumulates a Summary case by case, so that results can be streamed: it keeps one float64 per
// judged case (for the median) and nothing else. The zero value is ready to use.
type SummaryBuilder struct {
	s      Summary
	scores []float64
	sum    float64
}

// Add counts one case result.
func (b *SummaryBuilder) Add(r CaseResult) {
	b.s.Total++
	if r.ModelUsage != nil {
		b.s.ModelUsage.Add(*r.ModelUsage)
	}
	if r.BudgetUnjudged {
		b.s.BudgetUnjudged++
	}
	switch r.Verdict {
	case VerdictPass:
		b.s.Passed++
	case VerdictFail:
		b.s.Failed++
	case VerdictSkipped:
		b.s.Skipped++
		return
	default:
		b.s.Errored++
		if r.Missing {
			b.s.Missing++
		}
		return
	}
	score := ClampScore(r.Score)
	if b.s.Judged == 0 || score < b.s.MinScore {
		b.s.MinScore = score
	}
	if b.s.Judged == 0 || score > b.s.MaxScore {
		b.s.MaxScore = score
	}
	b.s.Judged++
	b.sum += score
	b.scores = append(b.scores, score)
	b.s.Histogram[histogramBin(score)]++
}

func histogramBin(score float64) int {
	switch {
	case score < 0.2:
		return 0
	case score < 0.4:
		return 1
	case score < 0.6:
		return 2
	case score < 0.8:
		return 3
	}
	return 4
}

// Summary returns the summary of the cases added so far.
func (b *SummaryBuilder) Summary() Summary {
	s := b.s
	if n := len(b.scores); n > 0 {
		s.MeanScore = b.sum / float64(n)
		sorted := append([]float64(nil), b.scores...)
		sort.Float64s(sorted)
		if n%2 == 1 {
			s.MedianScore = sorted[n/2]
		} else {
			s.MedianScore = (sorted[n/2-1] + sorted[n/2]) / 2
		}
	}
	return s
}

// Summarize summarises a slice of results.
func Summarize(results []CaseResult) Summary {
	var b SummaryBuilder
	for _, r := range results {
		b.Add(r)
	}
	return b.Summary()
}
