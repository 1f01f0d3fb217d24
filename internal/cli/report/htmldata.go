package report

import (
	"slices"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// pageData is the JSON the page's script renders the case table from. Keys are short: a report of 100,000 cases
// repeats them 100,000 times.
type pageData struct {
	Run         string   `json:"run"`
	PageSize    int      `json:"pageSize"`
	MaxPageSize int      `json:"maxPageSize"`
	Evaluators  []string `json:"evaluators"`
	Baseline    string   `json:"baseline,omitempty"`
	CutCases    int      `json:"cutCases"`
	// Trials is the number of trials of every case (set above 1 only) and TrialPassRate the share of them a case
	// must pass (spec.trials.passRate).
	Trials        int        `json:"trials,omitempty"`
	TrialPassRate string     `json:"trialPassRate,omitempty"`
	Cases         []caseData `json:"cases"`
}

// caseData is one case of the table, failing first (its position is the default order).
type caseData struct {
	ID      string `json:"id"`
	Outcome string `json:"o"`
	// Score is the case score (Pass and Fail only).
	Score string `json:"s,omitempty"`
	// Message is why the case did not pass, on one line.
	Message    string     `json:"m,omitempty"`
	Evaluators []evalData `json:"e,omitempty"`
	Answer     *text      `json:"a,omitempty"`
	Input      *text      `json:"in,omitempty"`
	Expected   *text      `json:"ex,omitempty"`
	// Error and Reason say why a case erred or was skipped.
	Error  *text  `json:"err,omitempty"`
	Reason string `json:"r,omitempty"`
	// Carried names the run a resumed run carried the result from.
	Carried string `json:"c,omitempty"`
	// Newly is NewlyFailing or NewlyPassing against the baseline.
	Newly string `json:"b,omitempty"`
	// BaseOutcome, BaseScore and Delta are the baseline's result of the case and the score's change.
	BaseOutcome string `json:"bo,omitempty"`
	BaseScore   string `json:"bs,omitempty"`
	Delta       string `json:"d,omitempty"`
	// DurationMs and Tokens are the runner's metrics of the case.
	DurationMs *float64 `json:"ms,omitempty"`
	Tokens     float64  `json:"tok,omitempty"`
	// With trials: Passed is how many of its trials passed, Flaky marks trials that disagree, and Trials are every
	// trial's result in trial order (the case's own Evaluators, Answer, Error and Reason are then unset).
	Passed int         `json:"tp,omitempty"`
	Flaky  bool        `json:"f,omitempty"`
	Trials []trialData `json:"tr,omitempty"`
}

// trialData is one trial of a case: its result as a case of one trial shows it.
type trialData struct {
	Trial   int    `json:"t"`
	Outcome string `json:"o"`
	Score   string `json:"s,omitempty"`
	Message string `json:"m,omitempty"`
	// Absent marks a trial with no stored result at all (its pod stored nothing).
	Absent     bool       `json:"x,omitempty"`
	Evaluators []evalData `json:"e,omitempty"`
	Answer     *text      `json:"a,omitempty"`
	Error      *text      `json:"err,omitempty"`
	Reason     string     `json:"r,omitempty"`
	Carried    string     `json:"c,omitempty"`
	DurationMs *float64   `json:"ms,omitempty"`
	Tokens     float64    `json:"tok,omitempty"`
}

// evalData is one evaluator's result of a case.
type evalData struct {
	Name      string     `json:"n"`
	Type      string     `json:"t"`
	Verdict   string     `json:"v"`
	Score     string     `json:"s,omitempty"`
	Hits      []string   `json:"h,omitempty"`
	Misses    []string   `json:"x,omitempty"`
	Reasoning *text      `json:"r,omitempty"`
	Members   []evalData `json:"mem,omitempty"`
}

// text is a text as embedded: cut to its bound when longer (Bytes, then, is its full length).
type text struct {
	Text  string `json:"t"`
	Bytes int    `json:"n,omitempty"`
}

// bounded is s cut to n bytes (textbound.Head), with its full length when cut; nil for "".
func bounded(s string, n int) (*text, bool) {
	if s == "" {
		return nil, false
	}
	out := textbound.Head(s, n)
	if out == s {
		return &text{Text: s}, false
	}
	return &text{Text: out, Bytes: len(s)}, true
}

// caseBudget is the text bound of one case for n cases.
func caseBudget(maxBytes, n int) int {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTextBytes
	}
	if n == 0 {
		return maxCaseText
	}
	return min(max(maxBytes/n, minCaseText), maxCaseText)
}

// casesData is the table's data: every stored line failing first, its texts cut to the budget.
func casesData(in HTMLInput, m *marks) pageData {
	lines := slices.Clone(in.Lines)
	SortFailingFirst(lines)
	budget := caseBudget(in.MaxTextBytes, len(lines))
	data := pageData{Run: in.Run.Name, PageSize: defaultPageSize, MaxPageSize: maxPageSize, Cases: make([]caseData, 0, len(lines))}
	if m != nil {
		data.Baseline = m.status.RunName
	}
	names := map[string]bool{}
	for _, l := range lines {
		c, cut := caseOf(l, in.Cases[l.ID], budget)
		if m != nil {
			m.annotate(&c, l.ID, l.Score)
		}
		data.addEvaluators(names, l.Evaluators)
		if cut {
			data.CutCases++
		}
		data.Cases = append(data.Cases, c)
	}
	slices.Sort(data.Evaluators)
	return data
}

// caseOf is one line's table entry and whether a text of it was cut.
func caseOf(l *results.Line, t CaseText, budget int) (caseData, bool) {
	o := CaseOutcome(l)
	c := caseData{ID: l.ID, Outcome: string(o), Carried: l.CarriedFrom, DurationMs: l.DurationMs}
	if o == OutcomePass || o == OutcomeFail {
		c.Score = verdict.FormatScore(l.Score)
	}
	c.Message = oneLine(Message(l), maxMessageText)
	if l.TokenUsage != nil {
		c.Tokens = l.TokenUsage.Input + l.TokenUsage.Output
	}
	var cut, anyCut bool
	c.Answer, cut = bounded(l.Answer, budget/2)
	anyCut = anyCut || cut
	c.Input, cut = bounded(t.Input, budget/4)
	anyCut = anyCut || cut
	c.Expected, cut = bounded(t.Expected, budget/4)
	anyCut = anyCut || cut
	c.Error, cut = bounded(l.Error, budget/4)
	anyCut = anyCut || cut
	if o == OutcomeSkipped {
		c.Reason = oneLine(l.Reason, maxMessageText)
	}
	c.Evaluators, cut = evalsOf(l.Evaluators, budget/4)
	return c, anyCut || cut
}

// evalsOf is the evaluators' entries (composites with their members) and whether a text was cut.
func evalsOf(list []verdict.EvaluatorResult, reasoning int) ([]evalData, bool) {
	if len(list) == 0 {
		return nil, false
	}
	out := make([]evalData, 0, len(list))
	anyCut := false
	for _, e := range list {
		d := evalData{Name: e.Name, Type: e.Type, Verdict: string(e.Verdict)}
		if e.Verdict != verdict.VerdictSkipped {
			d.Score = verdict.FormatScore(e.Score)
		}
		var cut bool
		d.Hits, cut = notes(e.Hits)
		anyCut = anyCut || cut
		d.Misses, cut = notes(e.Misses)
		anyCut = anyCut || cut
		d.Reasoning, cut = bounded(e.Reasoning, reasoning)
		anyCut = anyCut || cut
		d.Members, cut = evalsOf(e.Members, reasoning)
		anyCut = anyCut || cut
		out = append(out, d)
	}
	return out, anyCut
}

// notes are hits or misses, each cut to maxNoteText.
func notes(list []string) ([]string, bool) {
	if len(list) == 0 {
		return nil, false
	}
	out := make([]string, len(list))
	cut := false
	for i, s := range list {
		out[i] = textbound.Head(s, maxNoteText)
		cut = cut || out[i] != s
	}
	return out, cut
}

// annotate marks a case newly failing or passing and gives its baseline result and score change (score: the
// run's score of the case, counted when c has one).
func (m *marks) annotate(c *caseData, id string, score float64) {
	c.Newly = m.newly[id]
	b, ok := m.base[id]
	if !ok {
		return
	}
	c.BaseOutcome = string(b.outcome)
	if b.scored {
		c.BaseScore = verdict.FormatScore(b.score)
		if c.Score != "" {
			d := score - b.score
			c.Delta = verdict.FormatScore(d)
			if d >= 0 {
				c.Delta = "+" + c.Delta
			}
		}
	}
}

// trialCasesData is the table's data of a run with trials: every case once, failing first by its verdict over its
// trials, each trial's result under it, the texts cut to the budget shared by every stored trial result.
func trialCasesData(in HTMLInput, rule results.TrialRule, groups []*TrialCase, m *marks) pageData {
	cases := slices.Clone(groups)
	SortCasesFailingFirst(cases)
	budget := caseBudget(in.MaxTextBytes, max(len(in.Lines), len(cases)))
	data := pageData{Run: in.Run.Name, PageSize: defaultPageSize, MaxPageSize: maxPageSize, Trials: rule.N(),
		TrialPassRate: rule.PassRateText, Cases: make([]caseData, 0, len(cases))}
	if data.TrialPassRate == "" {
		data.TrialPassRate = "1"
	}
	if m != nil {
		data.Baseline = m.status.RunName
	}
	names := map[string]bool{}
	for _, tc := range cases {
		c, cut := trialCaseOf(tc, in.Cases[tc.ID], budget)
		if m != nil {
			m.annotate(&c, tc.ID, tc.Case.Score)
		}
		for _, l := range tc.Trials {
			if l != nil {
				data.addEvaluators(names, l.Evaluators)
			}
		}
		if cut {
			data.CutCases++
		}
		data.Cases = append(data.Cases, c)
	}
	slices.Sort(data.Evaluators)
	return data
}

// trialCaseOf is one case of a run with trials as the table shows it, and whether a text of it was cut.
func trialCaseOf(tc *TrialCase, t CaseText, budget int) (caseData, bool) {
	c := caseData{ID: tc.ID, Outcome: string(tc.Outcome()), Passed: tc.Case.Passed, Flaky: tc.Flaky(),
		Message: oneLine(tc.Message(), maxMessageText), Trials: make([]trialData, len(tc.Trials))}
	if score, ok := tc.Score(); ok {
		c.Score = verdict.FormatScore(score)
	}
	var cut, anyCut bool
	c.Input, cut = bounded(t.Input, budget/4)
	anyCut = anyCut || cut
	c.Expected, cut = bounded(t.Expected, budget/4)
	anyCut = anyCut || cut
	for i, l := range tc.Trials {
		if l == nil {
			c.Trials[i] = trialData{Trial: i + 1, Outcome: string(OutcomeMissing), Absent: true}
			continue
		}
		one, cut := caseOf(l, CaseText{}, budget)
		anyCut = anyCut || cut
		c.Trials[i] = trialData{Trial: i + 1, Outcome: one.Outcome, Score: one.Score, Message: one.Message,
			Evaluators: one.Evaluators, Answer: one.Answer, Error: one.Error, Reason: one.Reason, Carried: one.Carried,
			DurationMs: one.DurationMs, Tokens: one.Tokens}
	}
	return c, anyCut
}

// addEvaluators lists each evaluator name of evals the page has not listed yet (names: those it has).
func (d *pageData) addEvaluators(names map[string]bool, evals []verdict.EvaluatorResult) {
	for _, e := range evals {
		if !names[e.Name] {
			names[e.Name] = true
			d.Evaluators = append(d.Evaluators, e.Name)
		}
	}
}
