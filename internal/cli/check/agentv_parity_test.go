package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parity counts how many of AgentV's evaluator results the operator matched.
type parity struct {
	// results is AgentV's evaluator results; judged those the operator judged too (Pass or Fail, not Error or
	// Skipped); sameScore and samePass those with the same score and the same pass/fail (borderline is not pass).
	results, judged, sameScore, samePass int
}

func (p *parity) add(q parity) {
	p.results += q.results
	p.judged += q.judged
	p.sameScore += q.sameScore
	p.samePass += q.samePass
}

// agentvEvaluator is one evaluator result of AgentV's result file (or a case's own result, for a case judged by
// its default llm_judge).
type agentvEvaluator struct {
	Name    string  `json:"name"`
	Type    string  `json:"type"`
	Score   float64 `json:"score"`
	Verdict string  `json:"verdict"`
}

// agentvVerdictOf is AgentV v2.0.1's verdict of a score (scoreToVerdict: pass at 0.8, borderline at 0.6).
func agentvVerdictOf(score float64) string {
	switch {
	case score >= 0.8:
		return "pass"
	case score >= 0.6:
		return "borderline"
	}
	return "fail"
}

// agentvDifferences are the evaluator results where the operator's score or pass/fail is not AgentV's, by
// "example/case/evaluator", with the reason. Every difference must be listed here and every listed one must occur.
// Not differences by this count, though they differ: a code judge AgentV could not spawn (`uv` absent) is 0 and fail
// there and Error (score 0) here, and a borderline AgentV verdict is a Fail here.
var agentvDifferences = map[string]string{
	"composite/weighted-average-example/release_gate": "the members are llm_judges with prompt files, judged with their own " +
		"prompts; AgentV v2.0.1 judges them with its default template (a quirk the operator does not copy)",
	"composite/nested-composite/comprehensive_evaluation": "its llm_judge members (nested too) are judged with their own " +
		"prompts; AgentV v2.0.1 uses its default template",
	"composite/llm-judge-conflict-resolution/final_decision": "the llm_judge aggregator's prompt is a file, read from the " +
		"bundle; AgentV v2.0.1 sends the path itself as the prompt (and judges the members with its default template)",
}

// compareWithAgentV compares the evaluators of the collector check document doc (--format json) with AgentV's
// results of the example (in testdata/agentv/RECORDINGS), case by case and evaluator by evaluator (in the eval file's order: AgentV names an inline
// rubric list "rubric", the operator "rubrics"), and fails on a difference agentvDifferences does not explain.
func compareWithAgentV(t *testing.T, recordings, example string, doc []byte) parity {
	t.Helper()
	var ours struct {
		Cases []struct {
			ID         string `json:"id"`
			Evaluators []struct {
				Name    string  `json:"name"`
				Score   float64 `json:"score"`
				Verdict string  `json:"verdict"`
			} `json:"evaluators"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(doc, &ours); err != nil {
		t.Fatalf("collector check's document: %v\n%s", err, doc)
	}
	data, err := os.ReadFile(filepath.Join("testdata/agentv", recordings, example, "agentv-results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var p parity
	differ := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var theirs struct {
			EvalID     string            `json:"eval_id"`
			Score      float64           `json:"score"`
			Evaluators []agentvEvaluator `json:"evaluator_results"`
		}
		if err := json.Unmarshal(sc.Bytes(), &theirs); err != nil {
			t.Fatalf("AgentV's results: %v", err)
		}
		evs := theirs.Evaluators
		if len(evs) == 0 { // judged by AgentV's default llm_judge
			evs = []agentvEvaluator{{Name: "llm_judge", Type: "llm_judge", Score: theirs.Score, Verdict: agentvVerdictOf(theirs.Score)}}
		}
		idx := -1
		for i, c := range ours.Cases {
			if c.ID == theirs.EvalID {
				idx = i
			}
		}
		for i, ev := range evs {
			p.results++
			key := example + "/" + theirs.EvalID + "/" + ev.Name
			if idx < 0 || i >= len(ours.Cases[idx].Evaluators) {
				differ[key] = "not judged by the operator"
				continue
			}
			o := ours.Cases[idx].Evaluators[i]
			if o.Verdict == "Pass" || o.Verdict == "Fail" {
				p.judged++
			}
			sameScore := math.Abs(o.Score-ev.Score) < 1e-9
			samePass := (o.Verdict == "Pass") == (ev.Verdict == "pass")
			if sameScore {
				p.sameScore++
			}
			if samePass {
				p.samePass++
			}
			if !sameScore || !samePass {
				differ[key] = fmt.Sprintf("AgentV %v %s, operator %v %s", ev.Score, ev.Verdict, o.Score, o.Verdict)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(differ))
	for k := range differ {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("differs: %s: %s (%s)", k, differ[k], agentvDifferences[k])
	}
	want := []string{}
	for k := range agentvDifferences {
		if strings.HasPrefix(k, example+"/") {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("evaluator results that differ from AgentV's (-listed in agentvDifferences +found):\n%s", diff)
	}
	return p
}
