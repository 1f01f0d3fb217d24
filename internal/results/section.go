// Package results turns a run's judged cases into what the collector persists: the EvalRun status results
// section, kept within a byte budget in a fixed order of importance, and the full per-case results as gzip'd
// JSONL chunks sized for the run's pre-created result ConfigMaps. It is pure Go: the collector does the I/O.
package results

import (
	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The section's budget and list bounds are the API's: evalsv1alpha1.DefaultStatusBudgetBytes and the
// evalsv1alpha1.MaxStatus* constants (checked against the CRD's MaxItems).

// Bounds, in bytes, of the status strings the collector writes, cut with textbound. Each is at most the maxLength
// of its field in the EvalRun CRD, which counts characters: n bytes are at most n characters (bounds_test.go reads
// the CRD).
const (
	// MaxCaseIDBytes bounds cases[].id and unexpectedIds[].
	MaxCaseIDBytes = 256
	// MaxScoreBytes bounds cases[].score and cases[].evaluators[].score.
	MaxScoreBytes = 16
	// MaxAnswerBytes bounds cases[].answer.
	MaxAnswerBytes = 512
	// MaxCaseErrorBytes bounds cases[].error.
	MaxCaseErrorBytes = 1024
	// MaxEvaluatorNameBytes bounds cases[].evaluators[].name.
	MaxEvaluatorNameBytes = 128
	// MaxEvaluatorTypeBytes bounds cases[].evaluators[].type.
	MaxEvaluatorTypeBytes = 64
	// MaxEvaluatorMessageBytes bounds cases[].evaluators[].message.
	MaxEvaluatorMessageBytes = 512
	// MaxParseErrorExcerptBytes bounds parseErrors[].excerpt.
	MaxParseErrorExcerptBytes = 512
	// MaxParseErrorMessageBytes bounds parseErrors[].message.
	MaxParseErrorMessageBytes = 1024
	// MaxCollectionMessageBytes bounds collection.message.
	MaxCollectionMessageBytes = 2048
	// MaxSignalBytes bounds collection.launcher.signal.
	MaxSignalBytes = 32
	// MaxStderrTailBytes bounds collection.launcher.stderrTail.
	MaxStderrTailBytes = 4096
)

// Section is the part of EvalRun status the collector owns; statusapply.Collector builds its apply body.
type Section struct {
	Summary       *evalsv1alpha1.RunSummary       `json:"summary,omitempty"`
	Cases         []evalsv1alpha1.CaseResult      `json:"cases,omitempty"`
	MissingIDs    []string                        `json:"missingIds,omitempty"`
	ParseErrors   []evalsv1alpha1.ParseError      `json:"parseErrors,omitempty"`
	UnexpectedIDs []string                        `json:"unexpectedIds,omitempty"`
	Results       *evalsv1alpha1.ResultsReference `json:"results,omitempty"`
	Collection    *evalsv1alpha1.CollectionStatus `json:"collection,omitempty"`
	Conditions    []metav1.Condition              `json:"conditions,omitempty"`
}

// Truncated reports whether anything was left out of the section (it is then in the result ConfigMaps only).
func (s *Section) Truncated() bool {
	r := s.Results
	return r != nil && (r.OmittedCases > 0 || r.OmittedMissingIDs > 0 || r.OmittedParseErrors > 0 || r.OmittedUnexpectedIDs > 0)
}
