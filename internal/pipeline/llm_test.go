package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// slowModel answers after a pause and records how many calls were in flight at once.
type slowModel struct{ inFlight, peak atomic.Int32 }

func (m *slowModel) Complete(ctx context.Context, _ llm.Request) (llm.Reply, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	return llm.Reply{Content: `{"score": 1}`, Usage: verdict.Usage{Calls: 1, TotalTokens: 3}}, nil
}

// TestCaseParallelismJudgesABatchConcurrently: the cases of one batch (here all of them) are judged several at once
// with CaseParallelism, never more, committed in output order, and the summary adds up their model usage; cases
// without evaluators read their whole case (llm_judge by default).
func TestCaseParallelismJudgesABatchConcurrently(t *testing.T) {
	const n = 12
	var doc, out strings.Builder
	doc.WriteString("evalcases:\n")
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("c%02d", i)
		fmt.Fprintf(&doc, "  - id: %s\n    expected_outcome: x\n    input_messages: [{role: user, content: q%d}]\n", ids[i], i)
		fmt.Fprintf(&out, `{"id":%q,"text":"a"}`+"\n", ids[i])
	}
	f, err := evalfile.Parse([]byte(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "out.jsonl", out.String())
	m := &slowModel{}
	sink := &recordingSink{}
	res, err := Run(context.Background(), Input{IDs: ids, File: f, Workers: 1, CaseParallelism: 4,
		Judge: &evaluate.Judge{Threshold: verdict.DefaultThreshold, LLM: m}}, Batch{Path: path}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.peak.Load(); p < 2 || p > 4 {
		t.Errorf("peak concurrent calls %d, want 2..4", p)
	}
	if res.Summary.Passed != n || res.Summary.ModelUsage.Calls != n || res.Summary.ModelUsage.TotalTokens != 3*n {
		t.Errorf("summary %+v", res.Summary)
	}
	for i, c := range sink.committed {
		if want := ids[i] + ":Pass:a"; c != want {
			t.Fatalf("commit %d is %s, want %s (output order)", i, c, want)
		}
	}
}
