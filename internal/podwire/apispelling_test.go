package podwire

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestSpelledAsTheAPI: the wire contract spells the API's words as the API does.
func TestSpelledAsTheAPI(t *testing.T) {
	for _, c := range []struct{ ours, api string }{
		{EvalFileViewInputs, string(evalsv1alpha1.EvalFileViewInputs)},
		{EvalFileViewFull, string(evalsv1alpha1.EvalFileViewFull)},
		{BatchingPerCase, string(evalsv1alpha1.BatchingPerCase)},
		{AnswerDelimitersNonce, string(evalsv1alpha1.AnswerDelimitersNonce)},
	} {
		if c.ours != c.api {
			t.Errorf("podwire spells %q, the API %q", c.ours, c.api)
		}
	}
	if MaxTrials != evalsv1alpha1.MaxTrials {
		t.Errorf("podwire bounds trials at %d, the API at %d", MaxTrials, evalsv1alpha1.MaxTrials)
	}
}

// TestResumeRecordIsTheAPIsResumeStatus: a ResumeStatus written as JSON reads back as a ResumeRecord that writes the
// same JSON, and the other way round: run.json's resume and status.resume are one shape.
func TestResumeRecordIsTheAPIsResumeStatus(t *testing.T) {
	for _, api := range []evalsv1alpha1.ResumeStatus{
		{From: "nightly-1", FromUID: "0b5a8c3e", Cases: evalsv1alpha1.ResumeNotPassed, Ran: 3, Carried: 97},
		{From: "nightly-2", FromUID: "7d1e", Cases: evalsv1alpha1.ResumeMissing, Ran: 2, Carried: 34, RanTrials: ptr.To[int32](5)},
	} {
		resumeRoundTrip(t, api)
	}
}

func resumeRoundTrip(t *testing.T, api evalsv1alpha1.ResumeStatus) {
	t.Helper()
	a, err := json.Marshal(api)
	if err != nil {
		t.Fatal(err)
	}
	var rec ResumeRecord
	if err := json.Unmarshal(a, &rec); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("JSON (-ResumeStatus +ResumeRecord):\n%s", diff)
	}
	var back evalsv1alpha1.ResumeStatus
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(api, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
