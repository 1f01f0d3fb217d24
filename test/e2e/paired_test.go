//go:build e2e

package e2e

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestPairedBaselineOnTrials: three nights of the sample agent on the real cluster, each answering the 12 cases
// 3 times (2 shards). The second night is the same agent with noise (case-003 answered wrong in one trial of three):
// the Paired test compares it with the first night and finds no regression, where a count of new failures would.
// The third night is a degraded agent (five cases answered wrong in every trial): Regressed, with the effect, its
// interval and the p-value in status and in the condition's message.
func TestPairedBaselineOnTrials(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "paired", nil)
	flipping := func(cases, onTrial string) string {
		if onTrial == "" {
			return sampleCommand + " --flip-case " + cases
		}
		return `flip=; [ "$ATTEMPT" != ` + onTrial + ` ] || flip=` + cases + `; ` + sampleCommand + ` --flip-case "$flip"`
	}
	first := sampleRun("night-1", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").Obj()
	create(t, first)
	waitFinished(t, ns, first.Name, runTimeout)

	noisy := sampleRun("night-2", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").
		Command(flipping("case-003", "2")).PairedBaseline(first.Name, "", "").Obj()
	degraded := sampleRun("night-3", ns).Inline(sampleEvalFile(t)).Shards(2, 0).Trials(3, "").
		Command(flipping("case-001,case-002,case-004,case-005,case-006", "")).PairedBaseline(first.Name, "", "").Obj()
	create(t, noisy)
	create(t, degraded)
	decided := func(run *evalsv1alpha1.EvalRun) bool {
		c := meta.FindStatusCondition(run.Status.Conditions, evalsv1alpha1.ConditionRegressed)
		return c != nil && c.Reason != evalsv1alpha1.ReasonBaselinePending
	}
	gotNoisy := waitRun(t, ns, noisy.Name, runTimeout, "a decided Regressed condition", decided)
	gotDegraded := waitRun(t, ns, degraded.Name, runTimeout, "a decided Regressed condition", decided)

	expectTrialsReport(t, ns, noisy.Name)
	expectCondition(t, gotNoisy, evalsv1alpha1.ConditionRegressed, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed})
	expectCondition(t, gotDegraded, evalsv1alpha1.ConditionRegressed, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonRegressed})
	for _, c := range []struct {
		run           *evalsv1alpha1.EvalRun
		worse, better int32
		pValue        float64
		inMessage     string
	}{
		// One case of 12 fell by a third: a sign-flip over one non-zero difference, p = 1/2.
		{gotNoisy, 1, 0, 0.5, "p = 0.5, not below alpha 0.05"},
		// Five cases fell from 3 of 3 to 0 of 3: of the 2^5 signs of their differences only these are as low, p = 1/32.
		{gotDegraded, 5, 0, 1.0 / 32, "p = 0.031 < alpha 0.05"},
	} {
		b := c.run.Status.Baseline
		if b == nil || b.Test != evalsv1alpha1.BaselineTestPaired || b.Paired == nil {
			t.Errorf("%s: status.baseline %+v: want a Paired comparison", c.run.Name, b)
			continue
		}
		p := b.Paired
		pv, err := strconv.ParseFloat(p.PValue, 64)
		if p.Method != evalsv1alpha1.PairedSignFlipExact || p.Cases != 12 || p.WorseCases != c.worse || p.BetterCases != c.better ||
			err != nil || math.Abs(pv-c.pValue) > 1e-6 {
			t.Errorf("%s: paired %+v: want SignFlipExact over 12 cases, %d worse, %d better, p %v", c.run.Name, *p, c.worse, c.better, c.pValue)
		}
		t.Logf("%s: Regressed: %s", c.run.Name, conditionMessage(c.run, evalsv1alpha1.ConditionRegressed))
		if msg := conditionMessage(c.run, evalsv1alpha1.ConditionRegressed); !strings.Contains(msg, c.inMessage) {
			t.Errorf("%s: Regressed message %q: want it to say %q", c.run.Name, msg, c.inMessage)
		}
	}
}

// TestPairedBaselineOnTrials' noisy night, read back by `kubectl evalrun report` and `results`: the report's header
// shows the pass rate and mean score with their intervals and the flaky case, its baseline section the Paired test;
// the results table shows case-003's trials.
func expectTrialsReport(t *testing.T, ns, name string) {
	t.Helper()
	page, err := kubectlEvalrun(t, ns, "report", name, "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="pass-rate-ci">95% CI `, `id="mean-score-ci">95% CI `,
		`id="flaky-card"><div class="label">Flaky cases</div><div class="value">1</div>`, `id="trials-pass-rate">`, `id="paired-pass-rate">`} {
		if !strings.Contains(page, want) {
			t.Errorf("report of %s has no %q", name, want)
		}
	}
	// The page's data: the cases its table and filters show, case-003 alone marked flaky.
	_, data, _ := strings.Cut(page, `id="report-data">`)
	data, _, _ = strings.Cut(data, "</script>")
	var doc struct {
		Cases []struct {
			ID    string `json:"id"`
			Flaky bool   `json:"f"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("report of %s: its data: %v", name, err)
	}
	var flaky []string
	for _, c := range doc.Cases {
		if c.Flaky {
			flaky = append(flaky, c.ID)
		}
	}
	expectDiff(t, "flaky cases in the report", []string{"case-003"}, flaky)
	table, err := kubectlEvalrun(t, ns, "results", name, "--flaky")
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(table), "\n"); len(rows) != 2 || !strings.HasPrefix(rows[1], "case-003") || !strings.Contains(rows[1], "2/3") {
		t.Errorf("results --flaky of %s: want case-003 alone, 2 of 3 trials passed:\n%s", name, table)
	}
}

// conditionMessage is the message of run's condition typ ("" without one).
func conditionMessage(run *evalsv1alpha1.EvalRun, typ string) string {
	if c := meta.FindStatusCondition(run.Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}
