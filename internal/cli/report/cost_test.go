package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

func TestRunnerCostText(t *testing.T) {
	tests := []struct {
		name string
		in   *evalsv1alpha1.RunnerCost
		want string
	}{
		{name: "none", want: "-"},
		{name: "every case reported", in: &evalsv1alpha1.RunnerCost{Cases: 5, TokenUsageCases: 5, InputTokens: 500, OutputTokens: 50,
			TotalTokens: 550, CostCases: 5, CostUSD: "0.5", DurationCases: 5, DurationMilliseconds: 5000},
			want: "0.5 USD (5 cases); 550 tokens: 500 input, 50 output, 0 cached (5 cases); 5000 ms (5 cases)"},
		{name: "some cases reported", in: &evalsv1alpha1.RunnerCost{Cases: 4, TokenUsageCases: 1, TotalTokens: 7, InputTokens: 7,
			CostCases: 0, CostUSD: "0", DurationCases: 1, DurationMilliseconds: 3},
			want: "0 USD (0 of 4 cases); 7 tokens: 7 input, 0 output, 0 cached (1 of 4 cases); 3 ms (1 of 4 cases)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, RunnerCostText(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff("2 requests; 300 tokens: 200 prompt, 100 completion",
		JudgeUsageText(&evalsv1alpha1.JudgeUsage{Calls: 2, PromptTokens: 200, CompletionTokens: 100, TotalTokens: 300})); diff != "" {
		t.Errorf("judge usage (-want +got):\n%s", diff)
	}
}

// The report's cost section: the run's own figures and the carried ones on their own rows, the budgets with the
// launcher's stop, each shard's figures; a hostile figure (the status is data) is escaped like every text.
func TestWriteHTMLCost(t *testing.T) {
	lines := sampleLines()
	in := HTMLInput{Run: reportRun(lines), Lines: lines, Generated: time.Now()}
	run := in.Run
	run.Spec.Target.MaxCostUSD = ptr.To("1")
	run.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{MaxRequests: ptr.To[int64](10)}}
	run.Status.Cost = &evalsv1alpha1.RunCost{
		Runner:          &evalsv1alpha1.RunnerCost{Cases: 3, CostCases: 3, CostUSD: "1.2", TokenUsageCases: 3, InputTokens: 30, TotalTokens: 30},
		Judges:          &evalsv1alpha1.JudgeUsage{Calls: 4, TotalTokens: 40, PromptTokens: 30, CompletionTokens: 10},
		Carried:         &evalsv1alpha1.CarriedCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 2, CostCases: 2, CostUSD: hostile[0]}},
		BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetRunnerCost},
	}
	run.Status.Collection = &evalsv1alpha1.CollectionStatus{Launcher: &evalsv1alpha1.LauncherReport{
		CostBudget: &evalsv1alpha1.CostBudgetStop{CostUSD: "1.2", MaxCostUSD: "1", Cases: 3}}}
	run.Status.Shards = []evalsv1alpha1.ShardStatus{
		{Index: 0, Message: hostile[1], Cost: &evalsv1alpha1.RunCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 1, CostCases: 1, CostUSD: "0.7"}}},
		{Index: 1},
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, in); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<section id="cost">`,
		"<tr><th>This run</th><td>1.2 USD (3 cases); 30 tokens: 30 input, 0 output, 0 cached (3 cases); 0 ms (0 of 3 cases)</td><td>4 requests; 40 tokens: 30 prompt, 10 completion</td></tr>",
		"<tr><th>Carried</th><td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; USD (2 cases);",
		`<td colspan="2" id="budgets">runner cost at most 1 USD (stopped the runner at 1.2 USD over 3 cases; budget 1 USD); at most 10 judge requests; reached: RunnerCost</td>`,
		"<td>0.7 USD (1 case); 0 tokens: 0 input, 0 output, 0 cached (0 of 1 cases); 0 ms (0 of 1 cases)</td><td>-</td>",
		"<td>-</td><td>-</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<img", "<script>alert"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
}

// A run without status.cost and without budgets has no cost section.
func TestWriteHTMLNoCost(t *testing.T) {
	lines := sampleLines()
	var b bytes.Buffer
	if err := WriteHTML(&b, HTMLInput{Run: reportRun(lines), Lines: lines, Generated: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="cost"`) {
		t.Error("a cost section without cost")
	}
}

func TestCostLines(t *testing.T) {
	c := &evalsv1alpha1.RunCost{Judges: &evalsv1alpha1.JudgeUsage{Calls: 1, TotalTokens: 2, PromptTokens: 1, CompletionTokens: 1},
		Carried: &evalsv1alpha1.CarriedCost{Runner: &evalsv1alpha1.RunnerCost{Cases: 1, CostCases: 1, CostUSD: "0.1"}}}
	want := []string{
		"Cost of this run: runner -; LLM judges 1 requests; 2 tokens: 1 prompt, 1 completion",
		"Cost of the carried results (spent by the earlier run): runner 0.1 USD (1 case); 0 tokens: 0 input, 0 output, 0 cached (0 of 1 cases); 0 ms (0 of 1 cases); LLM judges -",
	}
	if diff := cmp.Diff(want, CostLines(c)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := CostLines(nil); got != nil {
		t.Errorf("CostLines(nil) = %q, want none", got)
	}
}

func TestUnjudgedLine(t *testing.T) {
	run := &evalsv1alpha1.EvalRun{}
	if got := UnjudgedLine(run); got != "" {
		t.Errorf("without a summary: %q", got)
	}
	run.Status.Summary = &evalsv1alpha1.RunSummary{Total: 5, Errored: 2, BudgetUnjudged: ptr.To[int32](2)}
	if got, want := UnjudgedLine(run), "2 cases left unjudged by the LLM judging budget (verdict Error)"; got != want {
		t.Errorf("UnjudgedLine = %q, want %q", got, want)
	}
	run.Spec.Judging = &evalsv1alpha1.Judging{LLM: &evalsv1alpha1.LLMJudging{MaxRequests: ptr.To[int64](3)}}
	run.Status.Cost = &evalsv1alpha1.RunCost{BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeRequests}}
	if got := budgetsText(run); !strings.HasSuffix(got, "; 2 cases left unjudged by the LLM judging budget (verdict Error)") {
		t.Errorf("budgets = %q", got)
	}
}
