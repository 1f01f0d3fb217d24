//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/evalrun-operator/evalrun-operator/internal/cli/plugin"
)

// kubectlEvalrun runs `kubectl evalrun args...` (the plugin's command, in-process) against the local cluster in
// namespace ns.
func kubectlEvalrun(t *testing.T, ns string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := plugin.NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfigPath, "-n", ns}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	t.Logf("$ kubectl evalrun %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	return out.String(), err
}

// TestKubectlPlugin runs the sample on the real cluster and reads it back with `kubectl evalrun`: the results table
// from the stored results (failing first), the JUnit export (12 testcases: case-011's failure, case-012's missing
// record as an error), the runner's and collector's logs of its pod, and a comparison of the run with itself.
func TestKubectlPlugin(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t, "plugin", nil)
	run := sampleRun("screening-sample", ns).Inline(sampleEvalFile(t)).MinPassRate("0.8").Obj()
	create(t, run)
	waitFinished(t, ns, run.Name, runTimeout)

	table, err := kubectlEvalrun(t, ns, "results", run.Name)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(table), "\n")
	if len(rows) != 13 || !strings.HasPrefix(rows[0], "ID") {
		t.Fatalf("results table: %d rows, want a header and 12 cases", len(rows))
	}
	if !strings.HasPrefix(rows[1], "case-011") && !strings.HasPrefix(rows[1], "case-012") {
		t.Errorf("the table does not list a non-passing case first: %q", rows[1])
	}
	if failing, err := kubectlEvalrun(t, ns, "results", run.Name, "--verdict", "Fail"); err != nil || !strings.Contains(failing, "case-011") || strings.Contains(failing, "case-001") {
		t.Errorf("results --verdict Fail: %v\n%s", err, failing)
	}

	junit, err := kubectlEvalrun(t, ns, "export", run.Name, "-o", "junit")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal([]byte(junit), &doc); err != nil {
		t.Fatalf("the JUnit export is not XML: %v", err)
	}
	if doc.Tests != 12 || doc.Failures != 1 || doc.Errors != 1 {
		t.Errorf("JUnit counts tests=%d failures=%d errors=%d, want 12, 1, 1", doc.Tests, doc.Failures, doc.Errors)
	}

	logs, err := kubectlEvalrun(t, ns, "logs", run.Name, "--container", "runner")
	if err != nil || !strings.Contains(logs, "screening-runner: wrote 11 records") {
		t.Errorf("runner logs: %v\n%s", err, logs)
	}
	if logs, err := kubectlEvalrun(t, ns, "logs", run.Name, "--container", "collector"); err != nil || logs == "" {
		t.Errorf("collector logs: %v, %d bytes", err, len(logs))
	}
	// Following a finished pod's containers streams their whole logs, each line under its pod and container, and
	// ends with them.
	followed, err := kubectlEvalrun(t, ns, "logs", run.Name, "--follow")
	if err != nil || !regexp.MustCompile(`(?m)^pod/`+regexp.QuoteMeta(run.Name)+`-evalrun-\S+/runner screening-runner: wrote 11 records to \S+$`).MatchString(followed) ||
		!strings.Contains(followed, "/collector ") {
		t.Errorf("logs --follow: %v\n%s", err, followed)
	}

	same, err := kubectlEvalrun(t, ns, "compare", run.Name, run.Name)
	if err != nil || !strings.Contains(same, "Newly failing: 0") || !strings.Contains(same, "Result: not regressed") {
		t.Errorf("compare with itself: %v\n%s", err, same)
	}
	if code := plugin.ExitCode(err); code != 0 {
		t.Errorf("compare with itself: exit code %d, want 0", code)
	}
	if _, err := kubectlEvalrun(t, ns, "compare", run.Name, "no-such-run"); plugin.ExitCode(err) != plugin.ExitError {
		t.Errorf("compare with a missing baseline: %v, exit code %d, want %d", err, plugin.ExitCode(err), plugin.ExitError)
	}
}
