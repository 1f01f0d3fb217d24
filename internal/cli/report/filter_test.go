package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

func ids(lines []*results.Line) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.ID)
	}
	return out
}

func TestFilterAndOrder(t *testing.T) {
	cases := map[string]struct {
		filter Filter
		want   []string
	}{
		"everything, failing first": {want: []string{"case-002", "case-003", "case-005", "case-004", "case-001"}},
		"verdicts":                  {filter: Filter{Verdicts: []Outcome{OutcomeError}}, want: []string{"case-003", "case-005"}},
		"only missing":              {filter: Filter{Verdicts: []Outcome{OutcomeMissing}}, want: []string{"case-005"}},
		"pass and skipped":          {filter: Filter{Verdicts: []Outcome{OutcomePass, OutcomeSkipped}}, want: []string{"case-004", "case-001"}},
		"evaluator by name":         {filter: Filter{Evaluator: "policy"}, want: []string{"case-002"}},
		"evaluator by type":         {filter: Filter{Evaluator: "field_accuracy"}, want: []string{"case-002", "case-001"}},
		"id pattern":                {filter: Filter{ID: regexp.MustCompile(`00[14]$`)}, want: []string{"case-004", "case-001"}},
		"nothing":                   {filter: Filter{ID: regexp.MustCompile(`^x`)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var kept []*results.Line
			for _, l := range sampleLines() {
				if tc.filter.Match(l) {
					kept = append(kept, l)
				}
			}
			SortFailingFirst(kept)
			if diff := cmp.Diff(tc.want, ids(kept)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseVerdicts(t *testing.T) {
	got, err := ParseVerdicts("fail, Error,MISSING")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Outcome{OutcomeFail, OutcomeError, OutcomeMissing}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if _, err := ParseVerdicts("Failed"); err == nil {
		t.Error("ParseVerdicts(Failed) did not fail")
	}
}

// Every report counts a case as the run's summary does: --verdict X selects summary.x cases (Error with the
// missing ones), the table's VERDICT column says Missing exactly summary.missing times, and the JUnit suite's
// failures, errors and skipped are summary.failed, errored and skipped.
func TestOutcomesAgreeWithSummary(t *testing.T) {
	lines := sampleLines()
	var sb verdict.SummaryBuilder
	for _, l := range lines {
		sb.Add(l.CaseResult)
	}
	s := sb.Summary()
	want := map[Outcome]int{OutcomePass: s.Passed, OutcomeFail: s.Failed, OutcomeError: s.Errored,
		OutcomeSkipped: s.Skipped, OutcomeMissing: s.Missing}

	selected := map[Outcome]int{}
	for _, o := range outcomes {
		f := Filter{Verdicts: []Outcome{o}}
		for _, l := range lines {
			if f.Match(l) {
				selected[o]++
			}
		}
	}
	if diff := cmp.Diff(want, selected); diff != "" {
		t.Errorf("--verdict selects (-summary +got):\n%s", diff)
	}

	var b bytes.Buffer
	if err := WriteTable(&b, lines); err != nil {
		t.Fatal(err)
	}
	column := map[string]int{}
	for _, row := range strings.Split(strings.TrimSpace(b.String()), "\n")[1:] {
		column[strings.Fields(row)[1]]++
	}
	if column["Missing"] != s.Missing || column["Error"]+column["Missing"] != s.Errored {
		t.Errorf("VERDICT column %v, summary errored %d missing %d", column, s.Errored, s.Missing)
	}

	b.Reset()
	if err := WriteJUnit(&b, JUnitRun{Name: "r", Namespace: "n"}, lines); err != nil {
		t.Fatal(err)
	}
	j := checkJUnit(t, b.Bytes())
	if j.Tests != s.Total || j.Failures != s.Failed || j.Errors != s.Errored || j.Skipped != s.Skipped {
		t.Errorf("JUnit tests/failures/errors/skipped %d/%d/%d/%d, summary %d/%d/%d/%d",
			j.Tests, j.Failures, j.Errors, j.Skipped, s.Total, s.Failed, s.Errored, s.Skipped)
	}
}
