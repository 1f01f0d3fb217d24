package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// logServer serves pod logs as the API server relays them from the kubelet: each container's stream written a line
// at a time and flushed, so that the streams of a --follow interleave. A container named in waiting answers 400, as
// one that has not started; forever streams without end (until the client goes).
type logServer struct {
	lines   map[string][]string // by "pod/container"
	waiting string
	forever string
	mu      sync.Mutex
	queries []string
}

func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// /api/v1/namespaces/<ns>/pods/<pod>/log
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 7 || parts[6] != "log" {
		http.NotFound(w, r)
		return
	}
	key := parts[5] + "/" + r.URL.Query().Get("container")
	s.mu.Lock()
	s.queries = append(s.queries, key+"?"+r.URL.RawQuery)
	s.mu.Unlock()
	if key == s.waiting {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"container %q in pod %q is waiting to start: ContainerCreating","reason":"BadRequest","code":400}`,
			r.URL.Query().Get("container"), parts[5])
		return
	}
	flusher := w.(http.Flusher)
	if key == s.forever {
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "endless line %d\n", i); err != nil {
				return
			}
			flusher.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
	for _, l := range s.lines[key] {
		if _, err := w.Write([]byte(l)); err != nil {
			return
		}
		flusher.Flush()
		time.Sleep(time.Millisecond)
	}
}

func logClient(t *testing.T, s *logServer) kubernetes.Interface {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestFollowInterleavesWholeLines: every line of every stream is written once, whole, under its pod and container,
// in its stream's order; a line without a newline at the end gets one, a line longer than maxLogLine is cut into
// prefixed parts; a container that has not started is reported and the others go on; the requests follow.
func TestFollowInterleavesWholeLines(t *testing.T) {
	pods := []corev1.Pod{*shardPod("ns", "run-evalrun", "0", podwire.ContainerRunner), *shardPod("ns", "run-evalrun", "1", podwire.ContainerRunner)}
	long := strings.Repeat("x", maxLogLine+10)
	s := &logServer{lines: map[string][]string{}, waiting: "run-evalrun-1-x/collector"}
	for _, key := range []string{"run-evalrun-0-x/runner", "run-evalrun-0-x/collector", "run-evalrun-1-x/runner"} {
		for i := range 50 {
			s.lines[key] = append(s.lines[key], fmt.Sprintf("%s line %d\n", key, i))
		}
	}
	s.lines["run-evalrun-0-x/runner"] = append(s.lines["run-evalrun-0-x/runner"], long+"\n", "no newline at the end")
	var out, errOut bytes.Buffer
	o := &logsOptions{containers: []string{podwire.ContainerRunner, podwire.ContainerCollector}, tail: 100, follow: true, maxLogRequests: 4}
	if err := o.followAll(t.Context(), &out, &errOut, logClient(t, s), pods); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if line == "" {
			continue
		}
		prefix, text, ok := strings.Cut(line, " ")
		if !ok || !strings.HasPrefix(prefix, "pod/") || !strings.HasSuffix(line, "\n") {
			t.Fatalf("line %.80q is not a whole prefixed line", line)
		}
		got[strings.TrimPrefix(prefix, "pod/")] = append(got[strings.TrimPrefix(prefix, "pod/")], text)
	}
	for key, lines := range s.lines {
		want := slices.Clone(lines)
		if key == "run-evalrun-0-x/runner" {
			n := len(want)
			want = append(want[:n-2], long[:maxLogLine]+"\n", long[maxLogLine:]+"\n", "no newline at the end\n")
		}
		if !slices.Equal(got[key], want) {
			t.Errorf("%s: %d lines written, want %d in order (first %.60q)", key, len(got[key]), len(want), got[key])
		}
	}
	if len(got) != 3 {
		t.Errorf("streams written: %d, want 3", len(got))
	}
	if e := errOut.String(); !strings.HasPrefix(e, "pod/run-evalrun-1-x/collector ") || !strings.Contains(e, "run-evalrun-1-x") || strings.Count(e, "\n") != 1 {
		t.Errorf("stderr %q does not report the one container that has not started", e)
	}
	for _, q := range s.queries {
		if !strings.Contains(q, "follow=true") || !strings.Contains(q, "tailLines=100") {
			t.Errorf("request %s does not follow the last 100 lines", q)
		}
	}
}

// failingWriter fails every write after the first n bytes, as a closed pipe does.
type failingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n < len(p) {
		return 0, errors.New("broken pipe")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestFollowEndsWhenTheOutputBreaks: a closed output ends every stream, an endless one too, with the error.
func TestFollowEndsWhenTheOutputBreaks(t *testing.T) {
	pods := []corev1.Pod{*shardPod("ns", "run-evalrun", "0", podwire.ContainerRunner)}
	s := &logServer{forever: "run-evalrun-0-x/runner", lines: map[string][]string{}}
	o := &logsOptions{containers: []string{podwire.ContainerRunner, podwire.ContainerCollector}, tail: -1, follow: true, maxLogRequests: 2}
	done := make(chan error, 1)
	go func() {
		done <- o.followAll(t.Context(), &failingWriter{n: 4096}, &bytes.Buffer{}, logClient(t, s), pods)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("err = %v, want the write error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--follow did not end after its output broke")
	}
}

// TestFollowBoundsTheStreams: more streams than --max-log-requests is an error that says how to narrow them, and
// nothing is requested.
func TestFollowBoundsTheStreams(t *testing.T) {
	pods := []corev1.Pod{*shardPod("ns", "run-evalrun", "0", podwire.ContainerRunner), *shardPod("ns", "run-evalrun", "1", podwire.ContainerRunner)}
	s := &logServer{lines: map[string][]string{}}
	o := &logsOptions{containers: []string{podwire.ContainerRunner, podwire.ContainerCollector}, tail: -1, follow: true, maxLogRequests: 3}
	err := o.followAll(t.Context(), &bytes.Buffer{}, &bytes.Buffer{}, logClient(t, s), pods)
	if err == nil || !strings.Contains(err.Error(), "would stream 4 logs, more than --max-log-requests 3") {
		t.Errorf("err = %v, want the bound named", err)
	}
	if len(s.queries) != 0 {
		t.Errorf("requested %v before refusing", s.queries)
	}
}
