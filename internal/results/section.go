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

// Section is the part of EvalRun status the collector owns.
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
