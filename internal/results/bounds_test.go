package results

import (
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// Every bound the collector cuts a status string to fits the field's maxLength in the generated CRD. The bounds
// are in bytes and maxLength counts characters; a string has at most as many characters as bytes.
func TestStringBoundsFitTheCRD(t *testing.T) {
	for _, tc := range []struct {
		path  string
		bound int
	}{
		{"status.cases[].id", MaxCaseIDBytes},
		{"status.cases[].score", MaxScoreBytes},
		{"status.cases[].answer", MaxAnswerBytes},
		{"status.cases[].error", MaxCaseErrorBytes},
		{"status.cases[].evaluators[].name", MaxEvaluatorNameBytes},
		{"status.cases[].evaluators[].type", MaxEvaluatorTypeBytes},
		{"status.cases[].evaluators[].score", MaxScoreBytes},
		{"status.cases[].evaluators[].message", MaxEvaluatorMessageBytes},
		{"status.unexpectedIds[]", MaxCaseIDBytes},
		{"status.parseErrors[].excerpt", MaxParseErrorExcerptBytes},
		{"status.parseErrors[].excerpt", jsonlresult.ExcerptBytes},
		{"status.parseErrors[].message", MaxParseErrorMessageBytes},
		{"status.collection.message", MaxCollectionMessageBytes},
		{"status.collection.launcher.signal", MaxSignalBytes},
		{"status.collection.launcher.stderrTail", MaxStderrTailBytes},
	} {
		if limit := testutil.CRDMaxLength(t, "evals.evalrun.io_evalruns.yaml", tc.path); int64(tc.bound) > limit {
			t.Errorf("%s: the collector cuts to %d bytes, over the CRD's maxLength %d", tc.path, tc.bound, limit)
		}
	}
}
