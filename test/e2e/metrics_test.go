//go:build e2e

package e2e

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/testutil"
)

// TestManagerMetrics scrapes the manager's HTTPS metrics endpoint on the real cluster, as Prometheus would with a
// ServiceAccount bound to evalrun-metrics-reader: without a token it is refused (401), with a token lacking the
// role too (403), and with the role the counters of a run in this test's namespace moved by exactly its figures.
func TestManagerMetrics(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "metrics", nil)
	ctx := ctxFor(t, runTimeout+time.Minute)
	run := sampleRun("measured", ns).Inline(testutil.DecisionEval(3)).Obj()
	create(t, run)
	got := waitFinished(t, ns, run.Name, runTimeout)
	expectCondition(t, got, evalsv1alpha1.ConditionSucceeded, conditionSummary{metav1.ConditionTrue, evalsv1alpha1.ReasonCompleted})

	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(managerNamespace), client.MatchingLabels{"control-plane": "controller-manager"}); err != nil {
		t.Fatal(err)
	}
	var url string
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() && p.Status.PodIP != "" {
			url = "https://" + p.Status.PodIP + ":8443/metrics"
		}
	}
	if url == "" {
		t.Fatal("no running manager pod")
	}
	token := func(sa string, bind bool) string {
		if err := k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
		if bind {
			crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + sa},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "evalrun-metrics-reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
			if err := k8s.Create(ctx, crb); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = k8s.Delete(ctx, crb) })
		}
		tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrInt64(600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	// The manager serves a self-signed certificate (config/prometheus/monitor.yaml says so too).
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	scrape := func(tok string) (int, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("scrape without a token: HTTP %d, want 401", code)
	}
	if code, _ := scrape(token("no-role", false)); code != http.StatusForbidden {
		t.Errorf("scrape without the metrics-reader role: HTTP %d, want 403", code)
	}
	reader := token("prometheus", true)
	var code int
	var body string
	// The binding reaches the authorizer's cache within a few seconds.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		if code, body = scrape(reader); code == http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	if code != http.StatusOK {
		t.Fatalf("scrape with the metrics-reader role: HTTP %d", code)
	}
	for _, want := range []string{
		fmt.Sprintf(`evalrun_runs_finished_total{namespace=%q,passed="True",reason="Completed"} 1`, ns),
		fmt.Sprintf(`evalrun_cases_total{namespace=%q,verdict="Pass"} 3`, ns),
		fmt.Sprintf(`evalrun_run_duration_seconds_count{namespace=%q} 1`, ns),
		fmt.Sprintf(`evalrun_collection_latency_seconds_count{namespace=%q} 1`, ns),
		fmt.Sprintf(`evalrun_active_runs{namespace=%q} 0`, ns),
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics do not show %s", want)
		}
	}
	if t.Failed() {
		var lines []string
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, ns) {
				lines = append(lines, l)
			}
		}
		t.Logf("this namespace's series:\n%s", strings.Join(lines, "\n"))
	}
}
