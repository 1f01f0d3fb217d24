//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// monitoringNamespace is where hack/monitoring.sh installs the Prometheus Operator and Prometheus.
const monitoringNamespace = "monitoring"

// monitoringInstallTimeout bounds hack/monitoring.sh up: image imports and two rollouts (tens of seconds on an idle
// machine, 9m48s seen at load 65).
const monitoringInstallTimeout = 15 * time.Minute

// seriesScrapes bounds the wait for a counter the manager has created: it is in the next scrape, so this many
// successful scrapes of the manager after the wait began without it is a failure. The bound counts scrapes, not
// seconds: on a loaded node Prometheus finds the restarted manager's endpoint late (a one-minute bound flaked).
const seriesScrapes = 6

// alertTimeout bounds the wait for one alert: a scrape and a rule evaluation every 5 s, the shortened for:.
const alertTimeout = 4 * time.Minute

// TestMonitoringAlerts drives each shipped alert to firing on a real Prometheus, installed by the Prometheus
// Operator (hack/monitoring.sh), that scrapes the manager through the shipped ServiceMonitor
// (config/prometheus/monitor.yaml) and its metrics Service with the evalrun-metrics-reader ClusterRole, and
// evaluates the shipped alerts (the chart's PrometheusRule, whose defaults are config/prometheus/rules.yaml, with
// shortened windows). Each alert is read back from Prometheus' API with the run's namespace in its labels:
//   - EvalRunFailed (RunnerFailed): a runner that exits 3;
//   - EvalRunFailed (PolicyNotMet) and EvalRunPassRateLow: a run that completes with 2 of 3 cases passing;
//   - EvalRunRegressed: a run that fails a case its baseline passed;
//   - EvalRunsStuck: a runner that never ends, in a namespace where nothing finished, after a manager restart.
//
// Sequential: it restarts the shared manager. Go runs every sequential test before any parallel one, one at a time,
// so no other test has a run in flight during the restart; the tests that run after it find the new manager ready.
func TestMonitoringAlerts(t *testing.T) {
	installMonitoring(t)
	ctx := ctxFor(t, 15*time.Minute)
	prom := prometheusURL(t, ctx)
	applyShippedMonitoring(t, ctx)

	// A run that never ends, in a namespace where nothing finishes; then the manager restarts.
	stuckNS := newNamespace(t, "alert-stuck", nil)
	create(t, sampleRun("stuck", stuckNS).Inline(testutil.DecisionEval(1)).Command("touch {OUTPUT_FILE}; exec sleep 900").Obj())
	waitRun(t, stuckNS, "stuck", runTimeout, "its runner running", func(r *evalsv1alpha1.EvalRun) bool {
		c := succeeded(r)
		return c != nil && c.Reason == evalsv1alpha1.ReasonRunning
	})
	restarted := restartManager(t, ctx)

	// The other scenarios, each in its own namespace, created suspended: the manager creates their namespace's
	// counters at 0 when it first sees them, and they run once Prometheus has scraped those zeros (a team's
	// namespace has had runs before; a run that failed within one scrape of the namespace's very first run would be
	// a series born at 1, which no increase() sees: docs/monitoring.md).
	failedNS := newNamespace(t, "alert-failed", nil)
	create(t, sampleRun("fails", failedNS).Inline(testutil.DecisionEval(3)).Command("rm -f {OUTPUT_FILE}; exit 3").Suspend(true).Obj())
	policyNS := newNamespace(t, "alert-policy", nil)
	twoOfThree := `printf '%s\n' '` + strings.TrimSpace(testutil.DecisionLine(0, "CLEAR")) + `' '` +
		strings.TrimSpace(testutil.DecisionLine(1, "CLEAR")) + `' '` + strings.TrimSpace(testutil.DecisionLine(2, "REVIEW")) + `' > {OUTPUT_FILE}`
	create(t, sampleRun("policy", policyNS).Inline(testutil.DecisionEval(3)).Command(twoOfThree).Suspend(true).Obj())
	regressNS := newNamespace(t, "alert-regress", nil)
	create(t, sampleRun("baseline", regressNS).Inline(testutil.DecisionEval(3)).Suspend(true).Obj())
	create(t, sampleRun("candidate", regressNS).Inline(testutil.DecisionEval(3)).Command(twoOfThree).MinPassRate("0.5").
		Baseline("baseline", 0, "").Suspend(true).Obj())
	for _, ns := range []string{failedNS, policyNS, regressNS} {
		waitSeries(t, ctx, prom, `evalrun_runs_finished_total{namespace="`+ns+`",reason="RunnerFailed"}`)
		waitSeries(t, ctx, prom, `evalrun_baseline_comparisons_total{namespace="`+ns+`",reason="Regressed"}`)
	}
	for _, r := range [][2]string{{failedNS, "fails"}, {policyNS, "policy"}, {regressNS, "baseline"}, {regressNS, "candidate"}} {
		run := &evalsv1alpha1.EvalRun{ObjectMeta: metav1.ObjectMeta{Namespace: r[0], Name: r[1]}}
		if err := k8s.Patch(ctx, run, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":false}}`))); err != nil {
			t.Fatal(err)
		}
	}

	got := waitFinished(t, failedNS, "fails", runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonRunnerFailed})
	got = waitFinished(t, policyNS, "policy", runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionPassed, conditionSummary{metav1.ConditionFalse, evalsv1alpha1.ReasonPolicyNotMet})
	waitRun(t, regressNS, "candidate", runTimeout, "Regressed", func(r *evalsv1alpha1.EvalRun) bool {
		return condition(r, evalsv1alpha1.ConditionRegressed).Status == metav1.ConditionTrue
	})

	for _, a := range []struct {
		scenario, alert, namespace string
		labels                     map[string]string
	}{
		{"a runner that exits 3", "EvalRunFailed", failedNS, map[string]string{"reason": evalsv1alpha1.ReasonRunnerFailed}},
		{"a run that failed its success policy", "EvalRunFailed", policyNS, map[string]string{"reason": evalsv1alpha1.ReasonPolicyNotMet}},
		{"2 of 3 cases passing", "EvalRunPassRateLow", policyNS, nil},
		{"a regression against the baseline", "EvalRunRegressed", regressNS, nil},
		{"a runner that never ends, the manager restarted", "EvalRunsStuck", stuckNS, nil},
	} {
		start := time.Now()
		alert := waitAlert(t, ctx, prom, a.alert, a.namespace, a.labels)
		t.Logf("alert %s fired for %s in %s (labels %v, active since %s; %s after the wait began)", a.alert, a.scenario,
			a.namespace, alert.Labels, alert.ActiveAt.Format(time.RFC3339), time.Since(start).Round(time.Second))
	}
	t.Logf("manager restarted at %s", restarted.Format(time.RFC3339))

	// The run's namespace is the series' namespace label (honorLabels), not the manager's.
	var series []map[string]string
	promGet(t, ctx, prom, "/api/v1/series?match[]="+url.QueryEscape(`evalrun_runs_finished_total{namespace="`+failedNS+`"}`), &series)
	if len(series) == 0 {
		t.Errorf("no evalrun_runs_finished_total series with namespace=%s", failedNS)
	}
	for _, s := range series {
		if _, ok := s["exported_namespace"]; ok {
			t.Errorf("series %v has exported_namespace: honorLabels is not in effect", s)
		}
	}
}

// installMonitoring runs hack/monitoring.sh up (make monitoring): it installs the Prometheus Operator and
// Prometheus, or, when they are installed with the same images, waits until both are ready again (an earlier
// test may have stopped the API server they watch). hack/e2e.sh has built their binaries before the tests. It has a
// budget of its own (monitoringInstallTimeout), apart from the scenarios'.
func installMonitoring(t *testing.T) {
	t.Helper()
	start := time.Now()
	cmd := exec.CommandContext(ctxFor(t, monitoringInstallTimeout), filepath.Join(repoRoot, "hack", "monitoring.sh"), "up")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfigPath)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/monitoring.sh up: %v\n%s", err, out)
	}
	t.Logf("the Prometheus Operator and Prometheus ready in %s", time.Since(start).Round(100*time.Millisecond))
}

// prometheusURL is the base URL of hack/monitoring.sh's Prometheus (its pod, reachable from the node).
func prometheusURL(t *testing.T, ctx context.Context) string {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(monitoringNamespace), client.MatchingLabels{"app.kubernetes.io/name": "prometheus"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			return "http://" + p.Status.PodIP + ":9090"
		}
	}
	t.Fatalf("no running Prometheus in namespace %s after hack/monitoring.sh up", monitoringNamespace)
	return ""
}

// applyShippedMonitoring applies the shipped ServiceMonitor (config/prometheus, in the manager's namespace under
// config/default's name prefix) and the chart's PrometheusRule with shortened windows, removed at the end.
func applyShippedMonitoring(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := t.TempDir()
	monitor, err := kubectl(ctx, t, "kustomize", filepath.Join(repoRoot, "config", "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	// Only the ServiceMonitor: the alerts come from the chart, the same rules with values for their windows.
	sm, _, _ := strings.Cut(monitor[strings.Index(monitor, "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor"):], "\n---")
	sm = strings.Replace(sm, "name: controller-manager-metrics-monitor", "name: evalrun-controller-manager-metrics-monitor", 1)
	sm = strings.Replace(sm, "namespace: system", "namespace: "+managerNamespace, 1)
	helms, _ := filepath.Glob(filepath.Join(repoRoot, "bin", "tools", "helm-*"))
	if len(helms) == 0 {
		t.Fatal("no helm under bin/tools (make helm)")
	}
	rule, err := runCmd(ctx, helms[0], "template", "evalrun", filepath.Join(repoRoot, "charts", "evalrun-operator"),
		"--namespace", managerNamespace, "--show-only", "templates/prometheusrule.yaml", "--set", "fullnameOverride=evalrun",
		"--set", "prometheusRule.enabled=true", "--set", "prometheusRule.passRate.for=0s",
		"--set", "prometheusRule.stuck.window=2m", "--set", "prometheusRule.stuck.for=20s")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "monitoring.yaml")
	if err := os.WriteFile(file, []byte(sm+"\n---\n"+rule), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(ctx, t, "apply", "--server-side", "-f", file); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(context.Background(), t, "delete", "--ignore-not-found", "-f", file) })
}

// runCmd runs a command and returns its standard output.
func runCmd(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// waitSeries waits until an instant query of Prometheus returns a series for selector.
func waitSeries(t *testing.T, ctx context.Context, prom, selector string) {
	t.Helper()
	began := time.Now()
	scrapes := map[string]bool{} // the manager targets' successful scrapes since the wait began (instance + time)
	for {
		var v struct {
			Result []json.RawMessage `json:"result"`
		}
		promGet(t, ctx, prom, "/api/v1/query?query="+url.QueryEscape(selector), &v)
		if len(v.Result) > 0 {
			t.Logf("series %s after %s (%d scrapes of the manager)", selector, time.Since(began).Round(time.Second), len(scrapes))
			return
		}
		var targets struct {
			ActiveTargets []struct {
				ScrapePool string            `json:"scrapePool"`
				Labels     map[string]string `json:"labels"`
				Health     string            `json:"health"`
				LastScrape time.Time         `json:"lastScrape"`
			} `json:"activeTargets"`
		}
		promGet(t, ctx, prom, "/api/v1/targets?state=active", &targets)
		for _, tg := range targets.ActiveTargets {
			if tg.Health == "up" && strings.Contains(tg.ScrapePool, "controller-manager-metrics-monitor") && tg.LastScrape.After(began) {
				scrapes[tg.Labels["instance"]+" "+tg.LastScrape.String()] = true
			}
		}
		if len(scrapes) >= seriesScrapes {
			t.Fatalf("Prometheus has no series %s after %d successful scrapes of the manager (%s)", selector,
				len(scrapes), time.Since(began).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Prometheus has no series %s: %v (%d successful scrapes of the manager since %s)", selector,
				ctx.Err(), len(scrapes), began.Format(time.RFC3339))
		case <-time.After(2 * time.Second):
		}
	}
}

// restartManager restarts the shared manager (config/default's Deployment), waits for the new pod and returns when
// the restart began.
func restartManager(t *testing.T, ctx context.Context) time.Time {
	t.Helper()
	at := time.Now()
	for _, args := range [][]string{
		{"-n", managerNamespace, "rollout", "restart", "deployment/evalrun-controller-manager"},
		{"-n", managerNamespace, "rollout", "status", "deployment/evalrun-controller-manager", "--timeout=180s"},
	} {
		if out, err := kubectl(ctx, t, args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	return at
}

// firingAlert is one alert of Prometheus' /api/v1/alerts.
type firingAlert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

// waitAlert waits until Prometheus has alert name firing for namespace with the given labels, and returns it.
func waitAlert(t *testing.T, ctx context.Context, prom, name, namespace string, labels map[string]string) firingAlert {
	t.Helper()
	deadline := time.Now().Add(alertTimeout)
	var last struct {
		Alerts []firingAlert `json:"alerts"`
	}
	for {
		promGet(t, ctx, prom, "/api/v1/alerts", &last)
		for _, a := range last.Alerts {
			match := a.State == "firing" && a.Labels["alertname"] == name && a.Labels["namespace"] == namespace
			for k, v := range labels {
				match = match && a.Labels[k] == v
			}
			if match {
				return a
			}
		}
		if time.Now().After(deadline) {
			var targets any
			promGet(t, ctx, prom, "/api/v1/targets", &targets)
			t.Fatalf("alert %s for namespace %s %v did not fire within %s; alerts: %+v; targets: %v", name, namespace, labels,
				alertTimeout, last.Alerts, targets)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(5 * time.Second):
		}
	}
}

// promGet reads one Prometheus API path into data (the response's data field).
func promGet(t *testing.T, ctx context.Context, prom, path string, data any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, prom+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("Prometheus %s: %v", path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Status != "success" {
		t.Fatalf("Prometheus %s: HTTP %d %s (%v)", path, resp.StatusCode, body, err)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("Prometheus %s: %v", path, err)
	}
}
