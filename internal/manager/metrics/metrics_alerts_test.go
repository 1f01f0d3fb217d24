package metrics

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// TestFinishedReasonsAreEveryTerminalReason catches a failure reason added to the API but not to finishedReasons
// (its evalrun_runs_finished_total series would be born at 1 in each namespace, unseen by increase()): the
// reasons of api/v1alpha1's condition reason block, but those of runs in progress and of the Passed, Regressed and
// ResultsTruncated conditions, are finishedReasons.
func TestFinishedReasonsAreEveryTerminalReason(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "..", "api", "v1alpha1", "evalrun_status.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	notFinished := []string{
		evalsv1alpha1.ReasonPending, evalsv1alpha1.ReasonQueued, evalsv1alpha1.ReasonRunning, evalsv1alpha1.ReasonCollecting,
		evalsv1alpha1.ReasonPolicyMet, evalsv1alpha1.ReasonPolicyNotMet, evalsv1alpha1.ReasonNoResults,
		evalsv1alpha1.ReasonRegressed, evalsv1alpha1.ReasonNotRegressed, evalsv1alpha1.ReasonBaselinePending,
		evalsv1alpha1.ReasonBaselineUnavailable, evalsv1alpha1.ReasonStatusBudgetExceeded, evalsv1alpha1.ReasonAllResultsInStatus,
	}
	var want []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Values) != 1 || !strings.HasPrefix(spec.Names[0].Name, "Reason") {
			return true
		}
		lit, ok := spec.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(notFinished, v) {
			want = append(want, v)
		}
		return true
	})
	if len(want) < 20 {
		t.Fatalf("found only %d reasons in evalrun_status.go: %v", len(want), want)
	}
	got := slices.Clone(finishedReasons)
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("finishedReasons (-the API's terminal reasons +listed):\n%s", diff)
	}
}

// TestNoteRunNamespaceStartsAlertCountersAtZero: the first run of a namespace creates every series an alert reads
// with increase() at 0 (so the first failure, policy failure or regression is an increase), once.
func TestNoteRunNamespaceStartsAlertCountersAtZero(t *testing.T) {
	ns := "note-" + t.Name()
	NoteRunNamespace(ns)
	for _, c := range []struct {
		name   string
		metric prometheus.Collector
		labels []string
	}{
		{"a failure", runsFinished, []string{ns, evalsv1alpha1.ReasonRunnerFailed, "False"}},
		{"a failure with passing partial results", runsFinished, []string{ns, evalsv1alpha1.ReasonMissingResults, "True"}},
		{"a policy failure", runsFinished, []string{ns, evalsv1alpha1.ReasonCompleted, "False"}},
		{"a pass", runsFinished, []string{ns, evalsv1alpha1.ReasonCompleted, "True"}},
		{"a wait for the baseline", runsFinished, []string{ns, evalsv1alpha1.ReasonCompleted, "Unknown"}},
		{"passing cases", casesJudged, []string{ns, "Pass"}},
		{"failing cases", casesJudged, []string{ns, "Fail"}},
		{"a regression", regressions, []string{ns, evalsv1alpha1.ReasonRegressed}},
		{"missing ids", missingIDs, []string{ns}},
		{"runner tokens", tokens, []string{ns, "runner", "input"}},
		{"judge tokens", tokens, []string{ns, "judge", "output"}},
		{"reported cost", runnerCost, []string{ns}},
		{"judge requests", judgeRequests, []string{ns}},
		{"a budget reached", budgetsExceeded, []string{ns, string(evalsv1alpha1.BudgetJudgeRequests)}},
		{"trials", trials, []string{ns}},
		{"cases with trials", trialCases, []string{ns}},
		{"flaky cases", flakyCases, []string{ns}},
	} {
		vec := c.metric.(*prometheus.CounterVec)
		m, err := vec.GetMetricWithLabelValues(c.labels...)
		if err != nil {
			t.Fatal(err)
		}
		if v := testutil.ToFloat64(m); v != 0 {
			t.Errorf("%s: %v = %v, want 0", c.name, c.labels, v)
		}
	}
	before := testutil.CollectAndCount(runsFinished)
	if want := len(finishedReasons) * 3; before < want {
		t.Errorf("evalrun_runs_finished_total has %d series, want at least %d", before, want)
	}
	runsFinished.WithLabelValues(ns, evalsv1alpha1.ReasonRunnerFailed, "False").Inc()
	NoteRunNamespace(ns)
	if v := testutil.ToFloat64(runsFinished.WithLabelValues(ns, evalsv1alpha1.ReasonRunnerFailed, "False")); v != 1 {
		t.Errorf("a second note reset the counter: %v, want 1", v)
	}
	if n := testutil.CollectAndCount(runsFinished); n != before {
		t.Errorf("a second note changed the series: %d, want %d", n, before)
	}

	NoteScheduleNamespace(ns)
	for _, outcome := range []string{"Created", "Skipped", "Missed"} {
		if _, err := ScheduledTimes.GetMetricWithLabelValues(ns, outcome); err != nil || testutil.ToFloat64(ScheduledTimes.WithLabelValues(ns, outcome)) != 0 {
			t.Errorf("schedule outcome %s: not at 0 (%v)", outcome, err)
		}
	}
}

// TestActiveRunsOnlyFromTheLeader: a replica that is not elected reports no evalrun_active_runs (each replica's
// cache holds every run: summed, they would count once per replica); once elected, it reports every namespace.
func TestActiveRunsOnlyFromTheLeader(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := evalsv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	done := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "done", Namespace: "team-b"}}
	done.Status.Conditions = []metav1.Condition{{Type: evalsv1alpha1.ConditionSucceeded, Status: metav1.ConditionTrue,
		Reason: evalsv1alpha1.ReasonCompleted}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "team-a"}},
		&evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team-a"}},
		done,
	).Build()
	elected := make(chan struct{})
	prev := activeRunsFrom.Load()
	t.Cleanup(func() { activeRunsFrom.Store(prev) })
	activeRunsFrom.Store(&activeRunsSource{reader: reader, elected: elected})

	collect := func() map[string]float64 {
		ch := make(chan prometheus.Metric, 16)
		activeRuns{}.Collect(ch)
		close(ch)
		out := map[string]float64{}
		for m := range ch {
			var pb dto.Metric
			if err := m.Write(&pb); err != nil {
				t.Fatal(err)
			}
			out[pb.GetLabel()[0].GetValue()] = pb.GetGauge().GetValue()
		}
		return out
	}
	if got := collect(); len(got) != 0 {
		t.Errorf("not elected: reported %v", got)
	}
	close(elected)
	if diff := cmp.Diff(map[string]float64{"team-a": 2, "team-b": 0}, collect()); diff != "" {
		t.Errorf("elected (-want +got):\n%s", diff)
	}
}

// TestShippedQueriesUseRealLabels catches a label renamed in the code but not in the alerts or the dashboard:
// every label an alert's or a panel's selector matches, and every label it groups by, is one of the metrics it
// reads (le for histograms' buckets).
func TestShippedQueriesUseRealLabels(t *testing.T) {
	labels := registeredLabels(t)
	root := filepath.Join("..", "..", "..")
	var exprs []string
	rules, err := os.ReadFile(filepath.Join(root, "config", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Expr string }
			}
		}
	}
	if err := yaml.Unmarshal(rules, &pr); err != nil {
		t.Fatal(err)
	}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	dash, err := os.ReadFile(filepath.Join(root, "config", "grafana", "evalrun-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatal(err)
	}
	walkQueries(d, func(q string) { exprs = append(exprs, q) })
	if len(exprs) < 15 {
		t.Fatalf("found only %d queries", len(exprs))
	}
	metric := regexp.MustCompile(`(evalrun_[a-z_]+)(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-zA-Z_]+)\s*(=~|!~|!=|=)`)
	grouping := regexp.MustCompile(`\b(?:by|on)\s*\(([^)]*)\)`)
	values := regexp.MustCompile(`label_values\((evalrun_[a-z_]+),\s*([a-z_]+)\)`)
	for _, e := range exprs {
		used := map[string]bool{"le": strings.Contains(e, "_bucket")}
		for _, m := range metric.FindAllStringSubmatch(e, -1) {
			name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m[1], "_bucket"), "_sum"), "_count")
			known, ok := labels[name]
			if !ok {
				t.Errorf("%q: %s is not registered", e, name)
				continue
			}
			for _, l := range known {
				used[l] = true
			}
			for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
				if !slices.Contains(known, lm[1]) {
					t.Errorf("%q: %s has no label %s (it has %v)", e, name, lm[1], known)
				}
			}
		}
		for _, g := range grouping.FindAllStringSubmatch(e, -1) {
			for l := range strings.SplitSeq(g[1], ",") {
				if l = strings.TrimSpace(l); l != "" && !used[l] {
					t.Errorf("%q: groups by %s, a label of none of its metrics", e, l)
				}
			}
		}
		for _, v := range values.FindAllStringSubmatch(e, -1) {
			if !slices.Contains(labels[v[1]], v[2]) {
				t.Errorf("%q: %s has no label %s", e, v[1], v[2])
			}
		}
	}
}

// registeredLabels maps each registered metric to its labels.
func registeredLabels(t *testing.T) map[string][]string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range collectors() {
		c.Describe(ch)
	}
	close(ch)
	desc := regexp.MustCompile(`fqName: "([a-z_]+)".*variableLabels: \{([a-z_,]*)\}`)
	out := map[string][]string{}
	for d := range ch {
		m := desc.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read %s", d)
		}
		out[m[1]] = strings.Split(m[2], ",")
	}
	return out
}

// walkQueries calls f with every "expr" and "query" string of a Grafana dashboard.
func walkQueries(v any, f func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "expr" || k == "query") && strings.Contains(s, "evalrun_") {
				f(s)
				continue
			}
			walkQueries(val, f)
		}
	case []any:
		for _, val := range x {
			walkQueries(val, f)
		}
	}
}

// recordCost adds a finished run's own cost (never the carried results', counted by the run that made them) and
// counts each budget it reached.
func TestRecordCost(t *testing.T) {
	ns := "cost-" + t.Name()
	NoteRunNamespace(ns)
	recordCost(ns, &evalsv1alpha1.RunCost{
		Runner: &evalsv1alpha1.RunnerCost{InputTokens: 100, OutputTokens: 20, CachedTokens: 5, CostUSD: "1.25"},
		Judges: &evalsv1alpha1.JudgeUsage{Calls: 3, PromptTokens: 30, CompletionTokens: 9},
		Carried: &evalsv1alpha1.CarriedCost{Runner: &evalsv1alpha1.RunnerCost{InputTokens: 1000, CostUSD: "100"},
			Judges: &evalsv1alpha1.JudgeUsage{Calls: 50}},
		BudgetsExceeded: []evalsv1alpha1.BudgetKind{evalsv1alpha1.BudgetJudgeTokens},
	})
	recordCost(ns, nil)
	for _, c := range []struct {
		metric *prometheus.CounterVec
		labels []string
		want   float64
	}{
		{tokens, []string{ns, "runner", "input"}, 100},
		{tokens, []string{ns, "runner", "output"}, 20},
		{tokens, []string{ns, "runner", "cached"}, 5},
		{tokens, []string{ns, "judge", "input"}, 30},
		{tokens, []string{ns, "judge", "output"}, 9},
		{runnerCost, []string{ns}, 1.25},
		{judgeRequests, []string{ns}, 3},
		{budgetsExceeded, []string{ns, string(evalsv1alpha1.BudgetJudgeTokens)}, 1},
		{budgetsExceeded, []string{ns, string(evalsv1alpha1.BudgetJudgeRequests)}, 0},
	} {
		if got := testutil.ToFloat64(c.metric.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("%v = %v, want %v", c.labels, got, c.want)
		}
	}
}
