package report

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/results"
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
		"verdicts":                  {filter: Filter{Verdicts: []evaluate.Verdict{evaluate.VerdictError}}, want: []string{"case-003", "case-005"}},
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
	got, err := ParseVerdicts("fail, Error")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]evaluate.Verdict{evaluate.VerdictFail, evaluate.VerdictError}, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if _, err := ParseVerdicts("Failed"); err == nil {
		t.Error("ParseVerdicts(Failed) did not fail")
	}
}
