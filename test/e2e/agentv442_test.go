//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// agentv442Data is the AgentV 4.42.4 oracle's test data (docs/agentv-4.42-oracle.md).
var agentv442Data = filepath.Join("internal", "cli", "check", "testdata", "agentv442")

// agentv442Runner answers, from the AgentV oracle's fixed answers (a heredoc), exactly the tests whose ids its
// runner view lists: a batch runner for AgentV 4.42's CLI reads the suite's tests and their ids.
const agentv442Runner = `while IFS= read -r l; do id=${l#*\"id\": \"}; id=${id%%\"*}; ` +
	`if grep -q -- "- id: $id\$" {EVAL_FILE}; then printf '%s\n' "$l"; fi; done > {OUTPUT_FILE} <<'ANSWERS'
`

// TestAgentV442SuiteSharded runs one of AgentV 4.42.4's own example suites (assert-extended: ten tests of its
// deterministic graders) as an EvalRun in 3 shards on the real cluster, the runner answering with the answers
// AgentV 4.42.4 itself judged when the oracle was recorded: every test's verdict equals AgentV's.
func TestAgentV442SuiteSharded(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "agentv442", nil)
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(repoRoot, agentv442Data, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	suite := read(filepath.Join("features", "assert-extended", "evals", "dataset.eval.yaml"))
	answers := read(filepath.Join("answers", "assert-extended.jsonl"))
	want := map[string]evalsv1alpha1.Verdict{}
	sc := bufio.NewScanner(strings.NewReader(string(read(filepath.Join("recordings", "assert-extended", "dataset.eval", "results.jsonl")))))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			TestID string `json:"test_id"`
			Pass   bool   `json:"pass"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		want[r.TestID] = evalsv1alpha1.VerdictFail
		if r.Pass {
			want[r.TestID] = evalsv1alpha1.VerdictPass
		}
	}
	if err := sc.Err(); err != nil || len(want) != 10 {
		t.Fatalf("AgentV's results: %d tests, err %v; want 10", len(want), err)
	}

	run := sampleRun("suite", ns).Inline(string(suite)).Shards(3, 0).
		Command(agentv442Runner + strings.TrimRight(string(answers), "\n") + "\nANSWERS\n").Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})
	expectDiff(t, "verdicts (AgentV 4.42.4's own)", want, verdicts(got))
	passed := int32(0)
	for _, v := range want {
		if v == evalsv1alpha1.VerdictPass {
			passed++
		}
	}
	expectDiff(t, "summary", counts{Total: 10, Passed: passed, Failed: 10 - passed}, summaryCounts(got))
	if s := got.Status.Sharding; s == nil || s.Shards != 3 || s.Succeeded != 3 {
		t.Errorf("sharding %+v: want 3 shards, all succeeded", got.Status.Sharding)
	}
}
