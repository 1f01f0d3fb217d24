package evalfile

import "testing"

// TestLLMRequests: one request per llm_judge and rubric evaluator, composite members and an llm_judge aggregator
// included; a case without evaluators makes one (the default llm_judge) only when the run has a model.
func TestLLMRequests(t *testing.T) {
	data := []byte(`$schema: agentv-eval-v2
evalcases:
  - id: bare
    input_messages: [{role: user, content: hi}]
  - id: two
    input_messages: [{role: user, content: hi}]
    execution:
      evaluators:
        - {name: l, type: llm_judge}
        - {name: r, type: rubric, rubrics: [{id: tone, expected_outcome: Polite}]}
        - {name: lat, type: latency, threshold: 100}
  - id: composite
    input_messages: [{role: user, content: hi}]
    execution:
      evaluators:
        - name: co
          type: composite
          evaluators:
            - {name: l, type: llm_judge}
            - {name: r, type: rubric, rubrics: [{id: tone, expected_outcome: Polite}]}
            - {name: c, type: cost, budget: 1}
          aggregator: {type: llm_judge}
  - id: none-llm
    input_messages: [{role: user, content: hi}]
    execution:
      evaluators:
        - {name: c, type: cost, budget: 1}
`)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		withModel          bool
		wantTotal, wantMax int
	}{
		{withModel: true, wantTotal: 1 + 2 + 3, wantMax: 3},
		{withModel: false, wantTotal: 2 + 3, wantMax: 3},
	}
	for _, tc := range cases {
		if total, perCase := f.LLMRequests(tc.withModel); total != tc.wantTotal || perCase != tc.wantMax {
			t.Errorf("LLMRequests(%v) = %d, %d; want %d, %d", tc.withModel, total, perCase, tc.wantTotal, tc.wantMax)
		}
	}
}
