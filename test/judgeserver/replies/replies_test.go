package replies

import (
	"encoding/json"
	"testing"
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
