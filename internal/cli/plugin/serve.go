package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/cli/report"
)

// loopback reports whether host (of an address) is a loopback name or address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// reportServer serves one report page, rebuilt when what it shows changed.
type reportServer struct {
	o    *reportOptions
	e    *env
	c    client.Client
	name string
	warn func(error)

	mu sync.Mutex
	// key identifies what page was built from (the run's and the schedule's resource versions).
	key  string
	page []byte
	// hosts are the Host headers the server answers (its address, by name and number): a page fetched through
	// another name (DNS rebinding) is refused.
	hosts map[string]bool
}

// serveReport serves the report on o.address until the command's context ends.
func (o *reportOptions) serveReport(cmd *cobra.Command, e *env, name string) error {
	host, _, err := net.SplitHostPort(o.address)
	if err != nil {
		return fmt.Errorf("--address %q: %w", o.address, err)
	}
	if !loopback(host) {
		return fmt.Errorf("--address %q is not a loopback address: the report is served on 127.0.0.1, ::1 or localhost only", o.address)
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	s := &reportServer{o: o, e: e, c: c, name: name, warn: func(err error) { warnf(cmd.ErrOrStderr(), "%v", err) }}
	// Build the page once before listening: a run that does not exist fails here.
	if _, err := s.current(ctx); err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.address, err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.hosts = map[string]bool{ln.Addr().String(): true, net.JoinHostPort("localhost", port): true,
		net.JoinHostPort("127.0.0.1", port): true, net.JoinHostPort("::1", port): true}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	what := "EvalRun " + name
	if name == "" {
		what = "EvalSchedule " + o.schedule
	}
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "Serving the report of %s on http://%s/ (interrupt to stop)\n", what, ln.Addr()); err != nil {
		_ = ln.Close()
		return err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// current returns the page, rebuilt when the run or the schedule changed since it was built (their resource
// versions): a page is read from the API server twice per refresh, its results only when they may have changed.
func (s *reportServer) current(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, err := s.version(ctx)
	if err != nil {
		return nil, err
	}
	if key == s.key && s.page != nil {
		return s.page, nil
	}
	in, err := s.o.gather(ctx, warnWriter{s.warn}, s.e, s.c, s.name)
	if err != nil {
		return nil, err
	}
	if inProgress(in) {
		in.RefreshSeconds = int(reportRefresh / time.Second)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, in); err != nil {
		return nil, err
	}
	s.key, s.page = key, b.Bytes()
	return s.page, nil
}

// version is the resource versions of the run and the schedule the page shows.
func (s *reportServer) version(ctx context.Context) (string, error) {
	key, schedule := "", s.o.schedule
	ns, err := s.e.namespace()
	if err != nil {
		return "", err
	}
	if s.name != "" {
		run, err := s.e.getRun(ctx, s.c, s.name)
		if err != nil {
			return "", err
		}
		key = run.ResourceVersion
		if schedule == "" {
			schedule = ownerSchedule(run)
		}
	}
	if schedule != "" {
		sched := &evalsv1alpha1.EvalSchedule{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: schedule}, sched); err != nil {
			return "", fmt.Errorf("reading EvalSchedule %s: %w", schedule, err)
		}
		key += "/" + sched.ResourceVersion
	}
	return key, nil
}

// ServeHTTP answers GET / with the page; nothing else is served.
func (s *reportServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hosts[r.Host] {
		http.Error(w, "unknown host", http.StatusMisdirectedRequest)
		return
	}
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	page, err := s.current(r.Context())
	if err != nil {
		s.warn(err)
		http.Error(w, "the report could not be built: "+err.Error(), http.StatusBadGateway)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", report.ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(page)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(page)
}

// warnWriter writes each write as one warning.
type warnWriter struct{ warn func(error) }

func (w warnWriter) Write(p []byte) (int, error) {
	w.warn(errors.New(string(bytes.TrimSpace(bytes.TrimPrefix(p, []byte("Warning: "))))))
	return len(p), nil
}
