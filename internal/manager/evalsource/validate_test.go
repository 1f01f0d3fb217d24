package evalsource

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// evalWith returns a two-case eval file; fileLevel is an optional execution block for the file, and each case
// gets the evaluators block at its index (empty: the case declares none of its own).
func evalWith(fileLevel string, caseEvaluators ...string) string {
	var b strings.Builder
	b.WriteString("$schema: agentv-eval-v2\n")
	b.WriteString(fileLevel)
	b.WriteString("evalcases:\n")
	for i, id := range []string{"case-001", "case-002"} {
		b.WriteString("  - id: " + id + "\n")
		b.WriteString("    input_messages:\n      - role: user\n        content: hello\n")
		b.WriteString("    expected_messages:\n      - role: assistant\n        content: CLEAR\n")
		if i < len(caseEvaluators) && caseEvaluators[i] != "" {
			b.WriteString(caseEvaluators[i])
		}
	}
	return b.String()
}

const (
	codeJudgeEvaluators = `    evaluators:
      - name: judge
        type: code_judge
        script: ./judge.sh
`
	twoCodeJudgeEvaluators = `    evaluators:
      - name: judge-a
        type: code_judge
        script: ./a.sh
      - name: judge-b
        type: code_judge
        script: ./b.sh
`
	plainEvaluators = `    evaluators:
      - name: fast
        type: latency
        threshold: 100
`
	// A code_judge hidden as a composite member still needs the judge container.
	compositeMemberEvaluators = `    evaluators:
      - name: combo
        type: composite
        evaluators:
          - name: fast
            type: latency
            threshold: 100
          - name: inner
            type: code_judge
            script: ./inner.sh
        aggregator:
          type: weighted_average
`
	// So does a composite whose aggregator is a script.
	compositeAggregatorEvaluators = `    evaluators:
      - name: agg
        type: composite
        evaluators:
          - name: fast
            type: latency
            threshold: 100
        aggregator:
          type: code_judge
          path: ./aggregate.sh
`
	fileLevelCodeJudge = `execution:
  evaluators:
    - name: judge
      type: code_judge
      script: ./judge.sh
`
	fileLevelLatency = `execution:
  evaluators:
    - name: fast
      type: latency
      threshold: 100
`
)

// TestValidateEvalFile pins the count that decides whether the pod gets a judge container: every case whose
// evaluators (its own, the file's or spec.judging's defaults) contain a code_judge script anywhere; and whether the
// collector may read only the file's header (every case inherits evaluators that read nothing of it), without a
// model and with one.
func TestValidateEvalFile(t *testing.T) {
	cases := []struct {
		name         string
		eval         string
		defaults     []string
		wantIDs      []string
		wantJudges   int
		wantProblems string // a substring of the message; "" for a valid file
		// wantByID and wantByIDWithModel are JudgedByID without and with an LLM endpoint.
		wantByID, wantByIDWithModel bool
	}{
		{name: "no evaluators", eval: testutil.ScreeningEval, wantIDs: []string{"case-001", "case-002"}, wantByID: true},
		{name: "file-level evaluators that read nothing of the case", eval: evalWith(fileLevelLatency, "", ""),
			wantIDs: []string{"case-001", "case-002"}, wantByID: true, wantByIDWithModel: true},
		{name: "spec.judging evaluators that read nothing of the case", eval: evalWith(fileLevelCodeJudge, "", ""),
			defaults: []string{`{"name":"cheap","type":"cost","budget":0.01}`},
			wantIDs:  []string{"case-001", "case-002"}, wantByID: true, wantByIDWithModel: true},
		{name: "one case with its own", eval: evalWith(fileLevelLatency, plainEvaluators, ""), wantIDs: []string{"case-001", "case-002"}},
		{name: "no code judge", eval: evalWith("", plainEvaluators, plainEvaluators), wantIDs: []string{"case-001", "case-002"}},
		{name: "one case with a code judge", eval: evalWith("", codeJudgeEvaluators, plainEvaluators),
			wantIDs: []string{"case-001", "case-002"}, wantJudges: 1},
		{name: "a case with two code judges counts once", eval: evalWith("", twoCodeJudgeEvaluators, codeJudgeEvaluators),
			wantIDs: []string{"case-001", "case-002"}, wantJudges: 2},
		{name: "code judge as a composite member", eval: evalWith("", plainEvaluators, compositeMemberEvaluators),
			wantIDs: []string{"case-001", "case-002"}, wantJudges: 1},
		{name: "code judge as a composite aggregator", eval: evalWith("", compositeAggregatorEvaluators, plainEvaluators),
			wantIDs: []string{"case-001", "case-002"}, wantJudges: 1},
		{name: "file-level code judge inherited by cases without their own", eval: evalWith(fileLevelCodeJudge, plainEvaluators, ""),
			wantIDs: []string{"case-001", "case-002"}, wantJudges: 1},
		{name: "spec.judging default code judge", eval: evalWith("", "", ""),
			defaults: []string{`{"name":"judge","type":"code_judge","script":"./judge.sh"}`},
			wantIDs:  []string{"case-001", "case-002"}, wantJudges: 2},
		{name: "invalid file", eval: "evalcases: [", wantProblems: "YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := testutil.UnitRun(func(r *evalsv1alpha1.EvalRun) {
				if len(tc.defaults) == 0 {
					return
				}
				r.Spec.Judging = &evalsv1alpha1.Judging{}
				for _, d := range tc.defaults {
					r.Spec.Judging.Evaluators = append(r.Spec.Judging.Evaluators, runtime.RawExtension{Raw: []byte(d)})
				}
			})
			facts, msg := ValidateEvalFile(run, []byte(tc.eval))
			if tc.wantProblems == "" && msg != "" || !strings.Contains(msg, tc.wantProblems) {
				t.Fatalf("message = %q, want one containing %q", msg, tc.wantProblems)
			}
			if diff := cmp.Diff(tc.wantIDs, facts.CaseIDs); diff != "" {
				t.Errorf("case ids (-want +got):\n%s", diff)
			}
			if facts.CodeJudgeCases != tc.wantJudges {
				t.Errorf("code judge cases = %d, want %d", facts.CodeJudgeCases, tc.wantJudges)
			}
			if got, gotWithModel := facts.JudgedByID(false), facts.JudgedByID(true); got != tc.wantByID || gotWithModel != tc.wantByIDWithModel {
				t.Errorf("judged by id: %v, with a model %v; want %v, %v", got, gotWithModel, tc.wantByID, tc.wantByIDWithModel)
			}
		})
	}
}
