package results

import (
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Line is one line of the result ConfigMaps: a case's judgement, its answer and metrics. The collector encodes
// it without reflection (byte for byte what encoding/json gives); the manager decodes it to merge shards and to
// carry results into a resumed run.
type Line struct {
	verdict.CaseResult
	Answer     string                  `json:"answer,omitempty"`
	Line       int64                   `json:"line,omitempty"`
	TokenUsage *jsonlresult.TokenUsage `json:"tokenUsage,omitempty"`
	CostUSD    *float64                `json:"costUsd,omitempty"`
	DurationMs *float64                `json:"durationMs,omitempty"`
	// CarriedFrom names the earlier run a resumed run carried this result from.
	CarriedFrom string `json:"carriedFrom,omitempty"`
	// AnsweredBy names the earlier run whose runner answered the case, when a re-judge (spec.rejudge) judged that
	// run's kept record.
	AnsweredBy string `json:"answeredBy,omitempty"`
	// Trial is the trial (spec.trials) this result is of, from 1; omitted (0) for trial 1, so a result stored
	// before trials existed reads as trial 1 (TrialNumber). The collector sets it from its pod's completion index,
	// never from the runner's output.
	Trial int `json:"trial,omitempty"`
}

// TrialNumber is the trial the line is of: Trial, or 1 when it is omitted.
func (l *Line) TrialNumber() int {
	if l.Trial == 0 {
		return 1
	}
	return l.Trial
}

// Status is the line's case as status.cases shows it (the Builder bounds its strings).
func (l *Line) Status() evalsv1alpha1.CaseResult {
	out := CaseStatus(l.CaseResult, l.Answer)
	if l.CarriedFrom != "" {
		// A copy: pointing into l would move every Line whose status is taken to the heap.
		from := l.CarriedFrom
		out.CarriedFrom = &from
	}
	if l.AnsweredBy != "" {
		by := l.AnsweredBy
		out.AnsweredBy = &by
	}
	return out
}

// known is v, or Error for a verdict nothing set (the API's enum has no empty value).
func known(v verdict.Verdict) evalsv1alpha1.Verdict {
	switch v {
	case verdict.VerdictPass, verdict.VerdictFail, verdict.VerdictError, verdict.VerdictSkipped:
		return evalsv1alpha1.Verdict(v)
	}
	return evalsv1alpha1.VerdictError
}

// CaseStatus converts a case result to its status form (the Builder bounds its strings).
func CaseStatus(r verdict.CaseResult, answer string) evalsv1alpha1.CaseResult {
	out := evalsv1alpha1.CaseResult{ID: r.ID, Verdict: known(r.Verdict), Answer: textbound.Head(answer, MaxAnswerBytes)}
	if r.Verdict == verdict.VerdictPass || r.Verdict == verdict.VerdictFail {
		out.Score = verdict.FormatScore(r.Score)
	}
	if r.Verdict == verdict.VerdictError {
		out.Error = textbound.Head(r.Error, MaxCaseErrorBytes)
	}
	for i, e := range r.Evaluators {
		if i == evalsv1alpha1.MaxCaseEvaluators {
			break
		}
		es := evalsv1alpha1.EvaluatorSummary{Name: e.Name, Type: e.Type, Verdict: known(e.Verdict)}
		if e.Verdict != verdict.VerdictSkipped {
			es.Score = verdict.FormatScore(e.Score)
		}
		switch {
		case len(e.Misses) > 0:
			es.Message = textbound.Head(strings.Join(e.Misses, "; "), MaxEvaluatorMessageBytes)
		case e.Reasoning != "":
			es.Message = textbound.Head(e.Reasoning, MaxEvaluatorMessageBytes)
		}
		out.Evaluators = append(out.Evaluators, es)
	}
	return out
}

// SummaryStatus converts a run's summary, with its parse error and unexpected id counts, to its status form.
func SummaryStatus(s verdict.Summary, parseErrors, unexpected int) evalsv1alpha1.RunSummary {
	out := evalsv1alpha1.RunSummary{
		Total:       int32(s.Total),
		Passed:      int32(s.Passed),
		Failed:      int32(s.Failed),
		Errored:     int32(s.Errored),
		Skipped:     int32(s.Skipped),
		Missing:     int32(s.Missing),
		ParseErrors: int32(parseErrors),
		Unexpected:  int32(unexpected),
		PassRate:    verdict.FormatScore(s.PassRate()),
	}
	if s.BudgetUnjudged > 0 {
		n := int32(s.BudgetUnjudged)
		out.BudgetUnjudged = &n
	}
	if u := s.ModelUsage; u.Calls > 0 {
		out.JudgeUsage = &evalsv1alpha1.JudgeUsage{Calls: u.Calls, PromptTokens: u.PromptTokens,
			CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens, LatencyMilliseconds: u.LatencyMs}
	}
	if s.Judged > 0 {
		out.MeanScore = verdict.FormatScore(s.MeanScore)
		out.MedianScore = verdict.FormatScore(s.MedianScore)
		out.MinScore = verdict.FormatScore(s.MinScore)
		out.MaxScore = verdict.FormatScore(s.MaxScore)
		out.Histogram = make([]int32, len(s.Histogram))
		for i, n := range s.Histogram {
			out.Histogram[i] = int32(n)
		}
	}
	return out
}
