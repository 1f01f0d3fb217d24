package replies

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHashed(t *testing.T) {
	const sys = "You must respond with a single JSON object"
	a := Hashed(sys, "grade /tmp/x/features/a.md", "/tmp/x/features")
	if b := Hashed(sys, "grade /work/y/features/a.md", "/work/y/features"); a != b {
		t.Errorf("the same prompt at two bundle roots: %s and %s", a, b)
	}
	var free struct {
		Score  *float64 `json:"score"`
		Hits   []string
		Misses []string
	}
	if err := json.Unmarshal([]byte(a), &free); err != nil || free.Score == nil || *free.Score < 0 || *free.Score > 1 ||
		len(free.Hits) != 1 || len(free.Misses) != 1 {
		t.Errorf("freeform reply %s: %v", a, err)
	}
	scores := map[float64]bool{}
	for i := range 200 {
		_ = json.Unmarshal([]byte(Hashed(sys, string(rune('a'+i%26))+string(rune(i)), "")), &free)
		scores[*free.Score] = true
	}
	if len(scores) != 11 {
		t.Errorf("200 prompts gave %d distinct scores, want all 11", len(scores))
	}
	rubric := Hashed(`return {"checks": []}`, "[[ ## candidate_answer ## ]]\n- [fake]: no\n\n[[ ## rubrics ## ]]\n- [a] (REQUIRED): x\n- [b]: y\n", "")
	var r struct {
		Checks []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(rubric), &r); err != nil || len(r.Checks) != 2 || r.Checks[0].ID != "a" || r.Checks[1].ID != "b" {
		t.Errorf("rubric reply %s: %v (want checks a and b only)", rubric, err)
	}
}

// TestHashedV2Unchanged: the replies to AgentV v2.0.1's prompts are those its recorded results were made with
// (testdata/agentv), byte for byte; the 4.42 schemas must not change them.
func TestHashedV2Unchanged(t *testing.T) {
	for _, tc := range []struct{ system, user, want string }{
		{"You are an expert evaluator.", "[[ ## expected_outcome ## ]]\nx",
			`{"hits":["hash f7"],"misses":["hash b2"],"reasoning":"score 0.5 by hash","score":0.5}`},
		{`{"checks": [...]}`, "[[ ## rubrics ## ]]\n- [r1] (REQUIRED): a\n- [r2]: b\n",
			`{"checks":[{"id":"r1","satisfied":true,"reasoning":"hash 9d"},{"id":"r2","satisfied":true,"reasoning":"hash 7a"}],"overall_reasoning":"2 rubrics checked by hash"}`},
	} {
		if got := Hashed(tc.system, tc.user, ""); got != tc.want {
			t.Errorf("Hashed(%q, %q):\n got %s\nwant %s", tc.system, tc.user, got, tc.want)
		}
	}
}

// The system prompts of AgentV 4.42.4's graders (packages/core/src/evaluation/graders/llm-grader.ts), as sent.
const (
	freeformSystem   = "You must respond with a single JSON object matching this schema:\n\n{\n  \"score\": <number between 0.0 and 1.0>,\n  \"assertions\": [\n    {\n      \"text\": \"<brief description of what was checked>\",\n      \"passed\": <boolean>,\n      \"evidence\": \"<concise evidence, 1-2 sentences, optional>\"\n    }\n  ],\n  \"details\": {<optional object with domain-specific structured metrics>}\n}"
	checklistSystem  = "You are an expert grader. Evaluate the candidate answer against each rubric item.\nYou must return a valid JSON object matching this schema:\n{\n  \"checks\": [\n    {\n      \"id\": \"string (rubric id)\",\n      \"satisfied\": boolean,\n      \"reasoning\": \"string (brief explanation)\"\n    }\n  ],\n  \"overall_reasoning\": \"string (summary)\"\n}"
	scoreRangeSystem = "You are an expert grader. Score the candidate answer on each criterion.\nYou must return a valid JSON object matching this schema:\n{\n  \"checks\": [\n    {\n      \"id\": \"string (criterion id)\",\n      \"score\": integer (0-10),\n      \"reasoning\": \"string (brief explanation for score)\"\n    }\n  ],\n  \"overall_reasoning\": \"string (summary, optional)\"\n}\n\nImportant: The \"score\" must be an integer from 0 to 10 that falls within one of the defined score ranges for that criterion."
)

// TestHashed442 checks the replies to AgentV 4.42's three grader prompts: each parses as the schema AgentV validates
// it with (zod in llm-grader.ts) and names exactly the rubric ids or criteria the prompt lists.
func TestHashed442(t *testing.T) {
	t.Run("freeform", func(t *testing.T) {
		counts := map[int]int{}
		passed := map[bool]bool{}
		for i := range 100 {
			var got struct {
				Score      *float64 `json:"score"`
				Assertions []struct {
					Text     *string `json:"text"`
					Passed   *bool   `json:"passed"`
					Evidence string  `json:"evidence"`
				} `json:"assertions"`
				Details map[string]any `json:"details"`
				Hits    []string       `json:"hits"`
			}
			reply := Hashed(freeformSystem, "[[ ## answer ## ]]\n"+string(rune('a'+i)), "")
			if err := json.Unmarshal([]byte(reply), &got); err != nil {
				t.Fatalf("%s: %v", reply, err)
			}
			if got.Score == nil || *got.Score < 0 || *got.Score > 1 || got.Details["hash"] == nil || got.Hits != nil {
				t.Fatalf("reply %s: want a score in [0, 1], details.hash and no v2 hits", reply)
			}
			counts[len(got.Assertions)]++
			for _, a := range got.Assertions {
				if a.Text == nil || a.Passed == nil || a.Evidence == "" {
					t.Fatalf("reply %s: an assertion without text, passed or evidence", reply)
				}
				passed[*a.Passed] = true
			}
		}
		if len(counts) != 3 || !passed[true] || !passed[false] {
			t.Errorf("100 prompts gave assertion counts %v and passed values %v, want 1, 2 and 3 and both", counts, passed)
		}
	})
	t.Run("checklist", func(t *testing.T) {
		user := "[[ ## answer ## ]]\n- [not-a-rubric]: x\n\n[[ ## rubrics ## ]]\n\nOperator guidance:\n- Correctness: mark satisfied only when...\n\n" +
			"- [structure] (REQUIRED): Has headings\n- [success-codes] (REQUIRED) (weight: 2): Covers 2xx\n- [rubric-3] (operator: contradiction): No claims\n\nFor each rubric, determine if it is satisfied and provide brief reasoning."
		var got struct {
			Checks []struct {
				ID        string `json:"id"`
				Satisfied *bool  `json:"satisfied"`
				Reasoning string `json:"reasoning"`
			} `json:"checks"`
			Overall string `json:"overall_reasoning"`
		}
		reply := Hashed(checklistSystem, user, "")
		if err := json.Unmarshal([]byte(reply), &got); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got.Checks {
			if c.Satisfied == nil || c.Reasoning == "" {
				t.Errorf("check %s without satisfied or reasoning", c.ID)
			}
			ids = append(ids, c.ID)
		}
		if diff := cmp.Diff([]string{"structure", "success-codes", "rubric-3"}, ids); diff != "" || got.Overall == "" {
			t.Errorf("reply %s: checks (-want +got):\n%s", reply, diff)
		}
	})
	t.Run("score ranges", func(t *testing.T) {
		user := "[[ ## answer ## ]]\n### Criterion: fake\n\n[[ ## scoring_criteria ## ]]\n\n" +
			"### Criterion: factual_accuracy (weight: 2) [REQUIRED: min score 0.8]\nScore ranges:\n  - Score 0-2: bad\n\n" +
			"### Criterion: brevity_and_clarity\nScore ranges:\n  - Score 0: bad\n\n### Criterion: tone [REQUIRED: min score 7]\n"
		scores := map[int]bool{}
		for i := range 60 {
			reply := Hashed(scoreRangeSystem, user+string(rune('a'+i)), "")
			var got struct {
				Checks []struct {
					ID    string   `json:"id"`
					Score *float64 `json:"score"`
				} `json:"checks"`
			}
			if err := json.Unmarshal([]byte(reply), &got); err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range got.Checks {
				if c.Score == nil || *c.Score != float64(int(*c.Score)) || *c.Score < 0 || *c.Score > 10 {
					t.Fatalf("reply %s: criterion %s has no integer score 0..10", reply, c.ID)
				}
				scores[int(*c.Score)] = true
				ids = append(ids, c.ID)
			}
			if diff := cmp.Diff([]string{"factual_accuracy", "brevity_and_clarity", "tone"}, ids); diff != "" {
				t.Fatalf("reply %s: criteria (-want +got):\n%s", reply, diff)
			}
		}
		if len(scores) != 11 {
			t.Errorf("60 prompts gave %d distinct criterion scores, want all 11", len(scores))
		}
	})
}
