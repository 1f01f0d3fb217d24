package controller_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/manager/assess"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/plugin"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/browser"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil/s3server"
)

// Runner answers that are markup and script: a report shows them as text.
const (
	answerScript = `</script><script>alert(1)</script>`
	answerImage  = `<img src=x onerror=alert(2)>`
	answerLink   = `<a href="javascript:alert(3)">open</a>`
)

// reportOf runs `kubectl evalrun report args...` against the suite's API server in namespace ns and returns the
// HTML file it wrote (a file:// URL).
func reportOf(t *testing.T, ns string, args ...string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: restCfg.Host, CertificateAuthorityData: restCfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: restCfg.CertData, ClientKeyData: restCfg.KeyData, Token: restCfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: ns}
	kc.CurrentContext = "envtest"
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &stdout, ErrOut: &stderr})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "report", "-o", out}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("kubectl evalrun report %v: %v\n%s", args, err, stderr.String())
	}
	if strings.Contains(stderr.String(), "Warning") {
		t.Errorf("kubectl evalrun report %v warned: %s", args, stderr.String())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	return "file://" + out
}

// caseRows is how many case rows the page's table has.
const caseRows = `document.querySelectorAll("#case-rows tr.case").length`

// openCase filters the table to one case id and opens it; it returns the opened case's text.
func openCase(t *testing.T, b *browser.Browser, id string) string {
	t.Helper()
	browser.Eval[bool](t, b, fmt.Sprintf(`(function(){var s=document.getElementById("f-text"); s.value=%q; s.dispatchEvent(new Event("input")); return true})()`, id))
	b.Poll(t, fmt.Sprintf(`document.querySelectorAll("#case-rows tr.case").length === 1 && document.querySelector("#case-rows tr.case").dataset.id === %q`, id))
	browser.Eval[bool](t, b, `(document.querySelector("#case-rows tr.case").click(), true)`)
	b.Poll(t, `document.querySelector("tr.detail")`)
	return browser.Eval[string](t, b, `document.querySelector("tr.detail").textContent`)
}

// pick selects a value of a select on the page.
func pick(t *testing.T, b *browser.Browser, id, value string) {
	t.Helper()
	browser.Eval[bool](t, b, fmt.Sprintf(`(function(){var s=document.getElementById(%q); s.value=%q; s.dispatchEvent(new Event("change")); return true})()`, id, value))
}

// count is the text of a summary count.
func count(t *testing.T, b *browser.Browser, name string) string {
	t.Helper()
	return browser.Eval[string](t, b, fmt.Sprintf(`(document.querySelector('[data-count=%q]') || {textContent: "none"}).textContent`, name))
}

// TestReportOfStoredRunsInBrowser renders `kubectl evalrun report` from results the real collector pipeline
// stored (result ConfigMaps, a sharded run's bucket objects, a resumed run's carried results, a schedule's runs
// compared with their baselines) and checks in headless chromium what a person sees: the counts, filters that
// narrow the table, a case opened to its input, answer, expected answer and evaluators, the carried and newly
// failing marks, the schedule's chart, hostile runner answers shown as text with no dialog, and a console free of
// errors. Screenshots go to $ARTIFACTS.
func TestReportOfStoredRunsInBrowser(t *testing.T) {
	requireEnv(t)
	b := browser.Start(t, 1280, 1100)
	ns := newNamespace(t)
	eval := testutil.DecisionEval(7)

	// The sample's shape: one pod, results in ConfigMaps; case-002 fails with a hostile answer, case-003 and
	// case-005 are missing.
	first := createRun(t, testutil.MakeEvalRun("first", ns).Inline(eval))
	finishShards(t, first, func(id string) string {
		switch id {
		case "case-002":
			return answerScript
		case "case-003", "case-005":
			return ""
		}
		return "CLEAR"
	})
	first = waitReason(t, first, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	t.Run("sample", func(t *testing.T) { checkSampleReport(t, b, ns, first) })

	// A resumed run: only the three cases that did not pass run again (they pass now); the others are carried.
	second := createRun(t, testutil.MakeEvalRun("second", ns).Inline(eval).Resume("first", evalsv1alpha1.ResumeNotPassed))
	finishShards(t, second, func(string) string { return "CLEAR" })
	second = waitReason(t, second, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
	t.Run("resumed", func(t *testing.T) { checkResumedReport(t, b, ns, second) })

	shardedBucketRun(t, ns)
	t.Run("sharded bucket", func(t *testing.T) { checkShardedReport(t, b, ns) })

	names := scheduleRuns(t, ns)
	t.Run("schedule", func(t *testing.T) { checkScheduleReport(t, b, ns, names) })

	// The run itself, named: its owner's chart comes with it.
	t.Run("scheduled run", func(t *testing.T) { checkScheduledRunReport(t, b, ns, names) })
	b.Clean(t)
}

// checkSampleReport checks the report of a one-pod run whose results are in ConfigMaps.
func checkSampleReport(t *testing.T, b *browser.Browser, ns string, first *evalsv1alpha1.EvalRun) {
	b.Open(t, reportOf(t, ns, "first"))
	b.Poll(t, `document.body.dataset.ready === "true"`)
	if got, want := count(t, b, "failed"), fmt.Sprint(first.Status.Summary.Failed); got != want {
		t.Errorf("failed count %s, want %s", got, want)
	}
	if got := count(t, b, "missing"); got != "2" {
		t.Errorf("missing count %s, want 2", got)
	}
	if got := browser.Eval[int](t, b, caseRows); got != 7 {
		t.Errorf("%d rows, want 7", got)
	}
	pick(t, b, "f-verdict", "Missing")
	if got := browser.Eval[int](t, b, caseRows); got != 2 {
		t.Errorf("%d rows with verdict Missing, want 2", got)
	}
	pick(t, b, "f-verdict", "")
	if got := browser.Eval[string](t, b, `document.getElementById("missing").textContent`); !strings.Contains(got, "case-003") || !strings.Contains(got, "case-005") {
		t.Errorf("the missing ids section %q", got)
	}
	detail := openCase(t, b, "case-002")
	for _, want := range []string{"Input", `"amount": 100`, "Expected answer", `"decision": "CLEAR"`, "Runner's answer", answerScript, "decision", "field_accuracy", "Misses:"} {
		if !strings.Contains(detail, want) {
			t.Errorf("case-002 opened does not show %q:\n%s", want, detail)
		}
	}
	b.Screenshot(t, "report-integration-sample")
}

// checkResumedReport checks the report of a resumed run: its carried cases marked, with where they came from.
func checkResumedReport(t *testing.T, b *browser.Browser, ns string, second *evalsv1alpha1.EvalRun) {
	b.Open(t, reportOf(t, ns, "second"))
	b.Poll(t, `document.body.dataset.ready === "true"`)
	carried := browser.Eval[int](t, b, `document.querySelectorAll("#case-rows .badge.carried").length`)
	if want := int(second.Status.Resume.Carried); carried != want || carried != 4 {
		t.Errorf("%d cases marked carried, want %d (status.resume.carried)", carried, want)
	}
	if detail := openCase(t, b, "case-001"); !strings.Contains(detail, "carried from first") {
		t.Errorf("a carried case does not say where it came from:\n%s", detail)
	}
	if detail := openCase(t, b, "case-002"); strings.Contains(detail, "carried from") || strings.Contains(detail, answerScript) {
		t.Errorf("case-002 ran again and passed; it shows:\n%s", detail)
	}
	b.Screenshot(t, "report-integration-resumed")
}

// checkShardedReport checks the report of a sharded run whose results are in a bucket, with markup answers.
func checkShardedReport(t *testing.T, b *browser.Browser, ns string) {
	b.Open(t, reportOf(t, ns, "sharded"))
	b.Poll(t, `document.body.dataset.ready === "true"`)
	if n := browser.Eval[int](t, b, `document.querySelectorAll("#shards tbody tr").length`); n != 3 {
		t.Errorf("%d shard rows, want 3", n)
	}
	if got := browser.Eval[string](t, b, `document.querySelector("#shards tbody").textContent`); !strings.Contains(got, "sharded-evalrun") {
		t.Errorf("the shards table names no pod: %s", got)
	}
	if got := count(t, b, "total"); got != "9" {
		t.Errorf("total %s, want 9", got)
	}
	pick(t, b, "f-verdict", "not-passing")
	if got := browser.Eval[int](t, b, caseRows); got != 3 {
		t.Errorf("%d rows not passing, want 3 (case-004, case-006, case-007)", got)
	}
	pick(t, b, "f-verdict", "")
	pick(t, b, "f-evaluator", "decision")
	if got := browser.Eval[int](t, b, caseRows); got != 8 {
		t.Errorf("%d rows judged by decision, want 8 (not the missing case)", got)
	}
	pick(t, b, "f-evaluator", "")
	// The stored answer is the runner's JSON: the link's quotes are escaped in it.
	for id, answer := range map[string]string{"case-006": answerImage, "case-007": strings.ReplaceAll(answerLink, `"`, `\"`)} {
		if detail := openCase(t, b, id); !strings.Contains(detail, `{"decision":"`+answer+`"}`) {
			t.Errorf("%s does not show its answer %q as text:\n%s", id, answer, detail)
		}
	}
	if n := browser.Eval[int](t, b, `document.querySelectorAll("img, a[href], iframe").length`); n != 0 {
		t.Errorf("%d img, a or iframe elements: a runner answer became markup", n)
	}
	b.Screenshot(t, "report-integration-sharded-bucket")
}

// checkScheduleReport checks `report --schedule`: the chart of the kept runs and the newest run against its
// baseline.
func checkScheduleReport(t *testing.T, b *browser.Browser, ns string, names []string) {
	b.Open(t, reportOf(t, ns, "--schedule", "nightly"))
	b.Poll(t, `document.body.dataset.ready === "true"`)
	got := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#history-chart .pass-rate circle")).map(c => c.dataset.run + "=" + c.dataset.value)`)
	want := []string{names[0] + "=1.0000", names[1] + "=0.6667", names[2] + "=0.3333"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the chart's pass-rate points %v, want %v", got, want)
	}
	if n := browser.Eval[int](t, b, `document.querySelectorAll("#history-chart .mean-score circle").length`); n != 3 {
		t.Errorf("%d mean-score points, want 3", n)
	}
	// --schedule without a run reports the newest run: compared with the one before, case-002 newly fails.
	if got := browser.Eval[string](t, b, `document.querySelector("h1").textContent`); !strings.Contains(got, "EvalRun "+ns+"/"+names[2]) {
		t.Errorf("the page's title %q does not name the newest run %s", got, names[2])
	}
	if got := count(t, b, "newlyFailing"); got != "1" {
		t.Errorf("newly failing %s, want 1", got)
	}
	pick(t, b, "f-verdict", "NewlyFailing")
	if ids := browser.Eval[[]string](t, b, `Array.from(document.querySelectorAll("#case-rows tr.case")).map(r => r.dataset.id)`); strings.Join(ids, ",") != "case-002" {
		t.Errorf("newly failing rows %v, want case-002", ids)
	}
	detail := openCase(t, b, "case-002")
	for _, want := range []string{"baseline " + names[1] + ": Pass, score 1.0000, delta -1.0000", answerScript} {
		if !strings.Contains(detail, want) {
			t.Errorf("case-002 opened does not show %q:\n%s", want, detail)
		}
	}
	b.Screenshot(t, "report-integration-schedule")
}

// checkScheduledRunReport checks the report of a scheduled run: its schedule's chart and its score change.
func checkScheduledRunReport(t *testing.T, b *browser.Browser, ns string, names []string) {
	b.Open(t, reportOf(t, ns, names[1]))
	b.Poll(t, `document.body.dataset.ready === "true"`)
	if n := browser.Eval[int](t, b, `document.querySelectorAll("#history-chart .pass-rate circle").length`); n != 3 {
		t.Errorf("the report of a scheduled run charts %d runs, want its schedule's 3", n)
	}
	if got := browser.Eval[string](t, b, `document.getElementById("score-delta").textContent`); !strings.Contains(got, "delta -0.3333") {
		t.Errorf("the score change %q, want delta -0.3333", got)
	}
}

// shardedBucketRun finishes a sharded run storing its results in a bucket (SeaweedFS): three shards, case-004
// missing, case-006 and case-007 answered with markup.
func shardedBucketRun(t *testing.T, ns string) {
	t.Helper()
	// A sharded run storing its results in a bucket: three shards, case-004 missing, case-006 with markup.
	srv := s3server.Start(t, s3server.Options{Buckets: []string{"evals"}})
	if err := k8s.Create(context.Background(), srv.CredentialsSecret(ns, "s3-creds")); err != nil {
		t.Fatal(err)
	}
	bucket := srv.Bucket("evals", "reports", "s3-creds")
	w := testutil.MakeEvalRun("sharded", ns).Inline(testutil.DecisionEval(9)).Shards(3, 0)
	w.Spec.Storage = &evalsv1alpha1.ResultsStorage{S3: bucket}
	sharded := createRun(t, w)
	finishShardsInto(t, sharded, func(id string) string {
		switch id {
		case "case-004":
			return ""
		case "case-006":
			return answerImage
		case "case-007":
			return answerLink
		}
		return "CLEAR"
	}, srv.Store(t, "evals", "reports"))
	sharded = waitReason(t, sharded, metav1.ConditionFalse, evalsv1alpha1.ReasonMissingResults)
	if refs := sharded.Status.Results; refs == nil || len(refs.Objects) == 0 || len(refs.ConfigMaps) != 0 {
		t.Fatalf("the sharded run's results are not in its bucket: %+v", sharded.Status.Results)
	}
}

// scheduleRuns creates and finishes a schedule's three runs, each compared with the one before, and returns their
// names, oldest first.
func scheduleRuns(t *testing.T, ns string) []string {
	t.Helper()
	// A schedule's three runs, each compared with the one before: the pass rate falls from 1 to 2/3 to 1/3.
	s := newSchedule("nightly", ns, evalsv1alpha1.ConcurrencyForbid)
	s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](3)
	s.Spec.Template.Spec.Baseline = &evalsv1alpha1.Baseline{MaxNewFailures: ptr.To[int32](5)}
	if err := k8s.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, failing := range [][]string{nil, {"case-001"}, {"case-001", "case-002"}} {
		at := advanceToHalfPast(t, 1)
		pokeSchedule(t, s)
		name := assess.ScheduledRunName("nightly", at)
		names = append(names, name)
		waitRuns(t, ns, append([]string{"first", "second", "sharded"}, names...)...)
		run := getRunNamed(t, ns, name)
		finishShards(t, run, func(id string) string {
			switch {
			case i == 2 && id == "case-002":
				return answerScript
			case len(failing) > 0 && id == failing[0]:
				return "REVIEW"
			}
			return "CLEAR"
		})
		waitReason(t, run, metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted)
		if i > 0 {
			waitRegressed(t, run, metav1.ConditionFalse, evalsv1alpha1.ReasonNotRegressed)
		}
	}
	return names
}
