// Package results turns a run's judged cases into what the collector persists: the EvalRun status results
// section, kept within a byte budget in a fixed order of importance, and the full per-case results as gzip'd
// JSONL chunks sized for the run's pre-created result ConfigMaps. It is pure Go: the collector does the I/O.
package results

import (
	"unicode/utf8"

	"k8s.io/utils/ptr"

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
	Summary    *evalsv1alpha1.RunSummary  `json:"summary,omitempty"`
	Cases      []evalsv1alpha1.CaseResult `json:"cases,omitempty"`
	MissingIDs []string                   `json:"missingIds,omitempty"`
	// MissingIDShards names the shard of each of MissingIDs (a merged run's), as runs.
	MissingIDShards []evalsv1alpha1.MissingIDRun    `json:"missingIdShards,omitempty"`
	ParseErrors     []evalsv1alpha1.ParseError      `json:"parseErrors,omitempty"`
	UnexpectedIDs   []string                        `json:"unexpectedIds,omitempty"`
	Results         *evalsv1alpha1.ResultsReference `json:"results,omitempty"`
	Collection      *evalsv1alpha1.CollectionStatus `json:"collection,omitempty"`
	// Records counts the kept records (status.records).
	Records    *evalsv1alpha1.RecordsStatus `json:"records,omitempty"`
	Conditions []metav1.Condition           `json:"conditions,omitempty"`
	// Cost is what the section's cases spent (status.cost).
	Cost *evalsv1alpha1.RunCost `json:"cost,omitempty"`
	// Trials is a merged run's figures over its trials (status.trials); nil for a run of one trial.
	Trials *evalsv1alpha1.TrialsStatus `json:"trials,omitempty"`
}

// Truncated reports whether anything was left out of the section (it is then in the result ConfigMaps only).
func (s *Section) Truncated() bool {
	r := s.Results
	return r != nil && (r.OmittedCases > 0 || r.OmittedMissingIDs > 0 || r.OmittedParseErrors > 0 || r.OmittedUnexpectedIDs > 0)
}

// ConfigMapNames are the result ConfigMaps r names, in order: each item of r.ConfigMaps after r.ConfigMapsPrefix.
func ConfigMapNames(r *evalsv1alpha1.ResultsReference) []string {
	if r == nil {
		return nil
	}
	return withPrefix(ptr.Deref(r.ConfigMapsPrefix, ""), r.ConfigMaps)
}

// ObjectURLs are the s3:// URLs of the bucket objects r names, in order: each item of r.Objects after
// r.ObjectsPrefix.
func ObjectURLs(r *evalsv1alpha1.ResultsReference) []string {
	if r == nil {
		return nil
	}
	return withPrefix(ptr.Deref(r.ObjectsPrefix, ""), r.Objects)
}

func withPrefix(prefix string, items []string) []string {
	if prefix == "" || len(items) == 0 {
		return items
	}
	out := make([]string, len(items))
	for i, item := range items {
		out[i] = prefix + item
	}
	return out
}

// shortened is items as the section names them: unchanged while their encoding takes at most limit bytes, else
// each after the longest start they all share (that start returned apart, nil when there is none), so that
// 1,000 shards' locations with the longest names fit the status budget.
func shortened(items []string, limit int64) (*string, []string) {
	if len(items) < 2 || listSize(items) <= limit {
		return nil, items
	}
	prefix := items[0]
	for _, it := range items[1:] {
		n := 0
		for n < len(prefix) && n < len(it) && prefix[n] == it[n] {
			n++
		}
		prefix = prefix[:n]
	}
	// Keep every item non-empty, and cut between runes.
	for _, it := range items {
		if len(it) == len(prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for prefix != "" && !utf8.RuneStart(items[0][len(prefix)]) {
		prefix = prefix[:len(prefix)-1]
	}
	if prefix == "" {
		return nil, items
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it[len(prefix):]
	}
	return &prefix, out
}
