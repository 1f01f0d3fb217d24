package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// maxMessage bounds the MESSAGE column of the table, in bytes.
const maxMessage = 100

// Cases is the document `results -o json|yaml` writes: the selected cases of a run, as stored (a missing case as
// the API records it: verdict Error, missing: true). In a run with trials, each case is decided over its trials
// (CaseDoc) and the document carries the run's status.trials.
type Cases struct {
	Run       string `json:"run"`
	Namespace string `json:"namespace"`
	// Stored is how many results the run stored (with trials: results of a trial of a case); Selected how many
	// cases the filters kept.
	Stored   int `json:"stored"`
	Selected int `json:"selected"`
	// Trials is the run's status.trials (a run with more than one trial per case).
	Trials *evalsv1alpha1.TrialsStatus `json:"trials,omitempty"`
	Cases  []CaseDoc                   `json:"cases"`
}

// CaseDoc is one case of Cases. With one trial it is the case's stored result line, field for field. With trials
// its id, verdict, score and missing are the case's over its trials, and trials holds its counts and each trial's
// stored result.
type CaseDoc struct {
	*results.Line
	Trials *CaseTrialsDoc `json:"trials,omitempty"`
}

// CaseTrialsDoc is a case's trials: how many passed, failed, errored, were skipped and have no record (stored as
// missing or not stored at all) of count, whether they disagree, and each trial's stored result in trial order
// (its trial field says which; a trial without a stored result has none).
type CaseTrialsDoc struct {
	Passed  int             `json:"passed"`
	Failed  int             `json:"failed"`
	Errored int             `json:"errored"`
	Skipped int             `json:"skipped"`
	Missing int             `json:"missing"`
	Count   int             `json:"count"`
	Flaky   bool            `json:"flaky"`
	Results []*results.Line `json:"results"`
}

// CaseDocOf is a case of a run with trials as Cases lists it.
func CaseDocOf(c *TrialCase) CaseDoc {
	k := c.Case
	line := &results.Line{CaseResult: verdict.CaseResult{ID: c.ID, Verdict: k.Verdict, Score: k.Score, Missing: k.AllMissing,
		BudgetUnjudged: k.BudgetUnjudged}}
	doc := &CaseTrialsDoc{Passed: k.Passed, Failed: k.Failed, Errored: k.Errored, Skipped: k.Skipped, Missing: k.Missing,
		Count: k.N, Flaky: k.Flaky(), Results: []*results.Line{}}
	for _, l := range c.Trials {
		if l != nil {
			doc.Results = append(doc.Results, l)
		}
	}
	return CaseDoc{Line: line, Trials: doc}
}

// WriteTable writes the cases as a kubectl-style table: ID, VERDICT (the case's Outcome: Missing for a case the
// runner produced no record for), SCORE, EVALUATORS (each evaluator's name and verdict) and MESSAGE (why it did not
// pass, one line, cut).
func WriteTable(w io.Writer, lines []*results.Line) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	if _, err := fmt.Fprintln(tw, "ID\tVERDICT\tSCORE\tEVALUATORS\tMESSAGE"); err != nil {
		return err
	}
	for _, l := range lines {
		v := CaseOutcome(l)
		score := "-"
		if v == OutcomePass || v == OutcomeFail {
			score = verdict.FormatScore(l.Score)
		}
		evals := make([]string, 0, len(l.Evaluators))
		for _, e := range l.Evaluators {
			evals = append(evals, e.Name+"="+string(e.Verdict))
		}
		ev := strings.Join(evals, ",")
		if ev == "" {
			ev = "-"
		}
		msg := oneLine(Message(l), maxMessage)
		if msg == "" {
			msg = "-"
		}
		if _, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(l.ID), v, score, cell(ev), msg); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// WriteTrialsTable writes the cases of a run with trials as WriteTable does, each case once: its VERDICT and SCORE
// over its trials, TRIALS (passed of N, and "flaky" when its trials disagree), EVALUATORS (each evaluator's passed
// trials of those it judged) and MESSAGE (the trial that stands for a case that did not pass, named).
func WriteTrialsTable(w io.Writer, cases []*TrialCase) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	if _, err := fmt.Fprintln(tw, "ID\tVERDICT\tSCORE\tTRIALS\tEVALUATORS\tMESSAGE"); err != nil {
		return err
	}
	for _, c := range cases {
		score := "-"
		if s, ok := c.Score(); ok {
			score = verdict.FormatScore(s)
		}
		trials := c.TrialsText()
		if c.Flaky() {
			trials += " flaky"
		}
		ev := c.EvaluatorsText()
		if ev == "" {
			ev = "-"
		}
		msg := oneLine(c.Message(), maxMessage)
		if msg == "" {
			msg = "-"
		}
		if _, err := fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(c.ID), c.Outcome(), score, trials, cell(ev), msg); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteYAML writes v as YAML (through its JSON form, as kubectl does).
func WriteYAML(w io.Writer, v any) error {
	out, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// WriteJSONL writes every line as one JSON object per line, in the stored encoding.
func WriteJSONL(w io.Writer, lines []*results.Line) error {
	enc := json.NewEncoder(w)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// oneLine folds s onto one line and cuts it to at most n bytes, its control characters escaped
// (textbound.PrintableHead): a table cell holds the runner's bytes.
func oneLine(s string, n int) string { return textbound.PrintableHead(fold(s), n) }

// cell is oneLine without a cut.
func cell(s string) string { return textbound.Printable(fold(s)) }

// fold puts s on one line: every run of white space (tabs and line breaks included) becomes one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }
