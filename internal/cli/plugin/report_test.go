package plugin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
)

// TestReportWritesOnePage: the report of a run stored in two ConfigMaps holds every stored case, to a file (-o)
// and to standard output (-o -); a run with no stored results yet is reported with a note saying so.
func TestReportWritesOnePage(t *testing.T) {
	ns := newNamespace(t)
	lines := screeningLines([]string{"case-002"}, []string{"case-004"}, []string{"case-007"})
	storedRun(t, ns, "nightly", lines, 2, nil)

	path := filepath.Join(t.TempDir(), "nightly.html")
	_, errOut, err := kubectlEvalrun(t, ns, "report", "nightly", "-o", path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "Wrote the report of nightly (10 cases") || !strings.Contains(errOut, path) {
		t.Errorf("stderr %q does not say where the report is", errOut)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>EvalRun " + ns + "/nightly</title>", `"id":"case-002","o":"Fail"`, `"id":"case-007","o":"Missing"`, "Content-Security-Policy"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}
	out, _, err := kubectlEvalrun(t, ns, "report", "nightly", "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	// The same page but for the time it was generated.
	generated := regexp.MustCompile(`Generated [^ ]+ by`)
	if generated.ReplaceAllString(out, "") != generated.ReplaceAllString(string(page), "") {
		t.Error("-o - writes another page than -o FILE")
	}

	storedRun(t, ns, "running", lines[:1], 1, func(r *evalsv1alpha1.EvalRun) { r.Status.Results = nil; r.Status.Conditions = nil })
	out, _, err = kubectlEvalrun(t, ns, "report", "running", "-o", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "EvalRun running has not stored results yet.") {
		t.Error("the report of a run without stored results does not say so")
	}
}

func TestReportRefusesBadArguments(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "name a run, or a schedule with --schedule"},
		{[]string{"report", "x", "--serve", "--address", "0.0.0.0:8080"}, "is not a loopback address"},
		{[]string{"report", "x", "--serve", "--address", "192.168.1.1:0"}, "is not a loopback address"},
		{[]string{"report", "x", "--serve", "-o", "x.html"}, "--serve writes no file"},
		{[]string{"report", "x", "--max-text-bytes", "0"}, "is not positive"},
		{[]string{"report", "nowhere", "-o", "-"}, "not found"},
	} {
		_, _, err := kubectlEvalrun(t, ns, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutine and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestReportServes: --serve answers GET / on loopback with the page and its CSP header, refuses other paths,
// methods and Host names, reloads the page of a run in progress and stops with the command's context.
func TestReportServes(t *testing.T) {
	ns := newNamespace(t)
	lines := screeningLines([]string{"case-002"}, nil, nil)
	storedRun(t, ns, "live", lines, 1, func(r *evalsv1alpha1.EvalRun) { r.Status.Conditions = nil })
	_, kc := apiServer(t)
	var errOut syncBuffer
	cmd := NewCommand(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", kc, "-n", ns, "report", "live", "--serve", "--address", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the server stopped with %v", err)
		}
	}()
	addr := regexp.MustCompile(`on http://([^/]+)/`)
	var base string
	deadline := time.Now().Add(time.Minute)
	for base == "" {
		if m := addr.FindStringSubmatch(errOut.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("the server did not say where it listens: %q", errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	get := func(method, url, host string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp, string(body)
	}
	resp, body := get(http.MethodGet, base+"/", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != report.ContentSecurityPolicy ||
		!strings.Contains(body, `"id":"case-002","o":"Fail"`) {
		t.Errorf("GET /: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if !strings.Contains(body, `<meta http-equiv="refresh" content="10">`) {
		t.Error("the page of a run in progress does not reload itself")
	}
	for _, tc := range []struct {
		method, path, host string
		want               int
	}{
		{http.MethodGet, "/other", "", http.StatusNotFound},
		{http.MethodPost, "/", "", http.StatusMethodNotAllowed},
		{http.MethodGet, "/", "evil.example:80", http.StatusMisdirectedRequest},
	} {
		if resp, _ := get(tc.method, base+tc.path, tc.host); resp.StatusCode != tc.want {
			t.Errorf("%s %s (Host %q): %d, want %d", tc.method, tc.path, tc.host, resp.StatusCode, tc.want)
		}
	}
}
