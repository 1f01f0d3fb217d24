package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// maxMessage bounds the MESSAGE column of the table, in bytes.
const maxMessage = 100

// Cases is the document `results -o json|yaml` writes: the selected cases of a run, as stored (a missing case as
// the API records it: verdict Error, missing: true).
type Cases struct {
	Run       string `json:"run"`
	Namespace string `json:"namespace"`
	// Stored is how many results the run stored; Selected how many the filters kept.
	Stored   int             `json:"stored"`
	Selected int             `json:"selected"`
	Cases    []*results.Line `json:"cases"`
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
