package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
	"github.com/google/go-cmp/cmp"
)

const testKey = "sk-test-7f3a9c-never-print-me"

// completion is a well-formed chat completion body with content.
func completion(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "c1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
	})
	return string(b)
}

// newClient returns a client of srv that does not sleep between attempts but records the waits.
func newClient(t *testing.T, srv *httptest.Server, mod func(*Config)) (*Client, *[]time.Duration) {
	t.Helper()
	cfg := Config{BaseURL: srv.URL + "/v1/", Model: "judge-1", APIKey: testKey}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := []time.Duration{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, &waits
}

func TestCompleteRequestShape(t *testing.T) {
	var got map[string]any
	var header http.Header
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, header = r.URL.Path, r.Header.Clone()
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		_, _ = io.WriteString(w, completion(`{"score":1}`))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	reply, err := c.Complete(context.Background(), Request{System: "the schema", User: "the prompt"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model": "judge-1",
		"messages": []any{
			map[string]any{"role": "system", "content": "the schema"},
			map[string]any{"role": "user", "content": "the prompt"},
		},
		"response_format": map[string]any{"type": "json_object"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if path != "/v1/chat/completions" {
		t.Errorf("path = %q", path)
	}
	if h := header.Get("Authorization"); h != "Bearer "+testKey {
		t.Errorf("Authorization = %q", h)
	}
	if h := header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q", h)
	}
	if reply.Content != `{"score":1}` || reply.FinishReason != "stop" {
		t.Errorf("reply = %+v", reply)
	}
	u := reply.Usage
	u.LatencyMs = 0
	if diff := cmp.Diff(verdict.Usage{Calls: 1, PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18}, u); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestCompleteNoKeyNoAuthorization(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := r.Header["Authorization"]; ok {
			t.Errorf("Authorization sent without a key: %q", h)
		}
		_, _ = io.WriteString(w, completion(`{}`))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, func(c *Config) { c.APIKey = "" })
	if _, err := c.Complete(context.Background(), Request{}); err != nil {
		t.Fatal(err)
	}
}

func TestCompleteRetries(t *testing.T) {
	cases := []struct {
		name string
		// replies are the server's status codes in order (200 answers a completion); headers by attempt.
		replies    []int
		retryAfter map[int]string
		wantErr    string
		wantCalls  int64
		wantWaits  []time.Duration // nil: not checked exactly, only counted
		waitCount  int
	}{
		{name: "429 with Retry-After seconds, then success", replies: []int{429, 200}, retryAfter: map[int]string{0: "2"},
			wantCalls: 2, wantWaits: []time.Duration{2 * time.Second}},
		{name: "503 with Retry-After as an HTTP date in the past falls back to backoff", replies: []int{503, 200},
			retryAfter: map[int]string{0: "Mon, 02 Jan 2006 15:04:05 GMT"}, wantCalls: 2, waitCount: 1},
		{name: "Retry-After is capped", replies: []int{429, 200}, retryAfter: map[int]string{0: "86400"},
			wantCalls: 2, wantWaits: []time.Duration{MaxBackoff}},
		{name: "500s until the attempts run out", replies: []int{500, 502, 503, 500},
			wantErr: "failed after 4 attempt(s): HTTP 500", wantCalls: 4, waitCount: 3},
		{name: "401 is not retried", replies: []int{401}, wantErr: "after 1 attempt(s): HTTP 401", wantCalls: 1},
		{name: "400 is not retried", replies: []int{400}, wantErr: "HTTP 400", wantCalls: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(tc.replies) {
					t.Errorf("unexpected attempt %d", i+1)
					w.WriteHeader(500)
					return
				}
				if v, ok := tc.retryAfter[i]; ok {
					w.Header().Set("Retry-After", v)
				}
				if tc.replies[i] != 200 {
					w.WriteHeader(tc.replies[i])
					_, _ = fmt.Fprintf(w, `{"error":{"message":"status %d"}}`, tc.replies[i])
					return
				}
				_, _ = io.WriteString(w, completion(`{"score":0.5}`))
			}))
			defer srv.Close()
			c, waits := newClient(t, srv, nil)
			reply, err := c.Complete(context.Background(), Request{User: "x"})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Complete: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Complete error = %v, want it to contain %q", err, tc.wantErr)
			}
			if reply.Usage.Calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", reply.Usage.Calls, tc.wantCalls)
			}
			if tc.wantWaits != nil {
				if diff := cmp.Diff(tc.wantWaits, *waits); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
			} else if len(*waits) != tc.waitCount {
				t.Errorf("waits = %v, want %d", *waits, tc.waitCount)
			}
			for i, w := range *waits {
				if w <= 0 || w > MaxBackoff {
					t.Errorf("wait %d = %s, out of (0, %s]", i, w, MaxBackoff)
				}
			}
		})
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	for n := 1; n <= 10; n++ {
		ceiling := min(DefaultBaseBackoff<<(n-1), MaxBackoff)
		for range 50 {
			if d := backoff(DefaultBaseBackoff, n); d <= 0 || d > ceiling+time.Millisecond {
				t.Fatalf("backoff(%d) = %s, want in (0, %s]", n, d, ceiling)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "x": 0, "-1": 0, "0": 0, "1.5": 1500 * time.Millisecond, "3": 3 * time.Second,
		now.Add(10 * time.Second).Format(http.TimeFormat): 10 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestCompleteTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, waits := newClient(t, srv, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.MaxAttempts = 2 })
	reply, err := c.Complete(context.Background(), Request{})
	if err == nil || !strings.Contains(err.Error(), "no reply within the request timeout of 50ms") {
		t.Fatalf("Complete error = %v", err)
	}
	if reply.Usage.Calls != 2 || len(*waits) != 1 {
		t.Errorf("calls = %d, waits = %v; want 2 calls, 1 wait", reply.Usage.Calls, *waits)
	}
}

func TestCompleteMalformedReplies(t *testing.T) {
	cases := map[string]struct {
		body    string
		wantErr string
	}{
		"not JSON":             {body: `<html>oops</html>`, wantErr: "is not a chat completion"},
		"truncated JSON":       {body: completion(`{"score":1}`)[:40], wantErr: "is not a chat completion"},
		"no choices":           {body: `{"choices":[]}`, wantErr: "has no choices[0].message.content"},
		"null content":         {body: `{"choices":[{"message":{"content":null}}]}`, wantErr: "has no choices[0].message.content"},
		"choices of the wrong": {body: `{"choices":"x"}`, wantErr: "is not a chat completion"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := newClient(t, srv, nil)
			_, err := c.Complete(context.Background(), Request{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Complete error = %v, want %q", err, tc.wantErr)
			}
			if n.Load() != 1 {
				t.Errorf("a malformed reply was retried: %d attempts", n.Load())
			}
		})
	}
}

func TestCompleteConcurrencyBound(t *testing.T) {
	const bound, calls = 3, 24
	var inFlight, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if now <= p || peak.CompareAndSwap(p, now) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond) // hold the request so that others pile up
		_, _ = io.WriteString(w, completion(`{"score":1}`))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, func(c *Config) { c.MaxConcurrent = bound })
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			if _, err := c.Complete(context.Background(), Request{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > bound {
		t.Errorf("%d requests in flight at once, bound %d", p, bound)
	}
	if p := peak.Load(); p < 2 {
		t.Logf("peak concurrency only %d (slow machine?)", p)
	}
}

func TestCompleteRequestsPerMinute(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, completion(`{}`))
	}))
	defer srv.Close()
	// 60 per minute: the first request passes, the second must wait about a second; a context that ends first
	// stops it.
	c, _ := newClient(t, srv, func(c *Config) { c.RequestsPerMinute = 60; c.MaxAttempts = 1 })
	if _, err := c.Complete(context.Background(), Request{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(ctx, Request{}); err == nil || !strings.Contains(err.Error(), "requests-per-minute") {
		t.Fatalf("second request within the second: err = %v, want the limiter's", err)
	}
}

func TestUnreachableEndpointFailsFast(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more: connection refused
	var logs strings.Builder
	c, err := New(Config{BaseURL: url, Model: "m", APIKey: testKey, MaxAttempts: 2, BaseBackoff: time.Millisecond,
		Logf: func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range DefaultUnavailableAfter {
		reply, err := c.Complete(context.Background(), Request{})
		if err == nil || errors.Is(err, ErrUnavailable) || reply.Usage.Calls != 2 {
			t.Fatalf("call %d: err = %v, calls = %d; want a failure after 2 attempts", i, err, reply.Usage.Calls)
		}
	}
	reply, err := c.Complete(context.Background(), Request{})
	if !errors.Is(err, ErrUnavailable) || reply.Usage.Calls != 0 {
		t.Fatalf("after %d failed calls: err = %v, calls = %d; want ErrUnavailable without a request", DefaultUnavailableAfter, err, reply.Usage.Calls)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("the error does not say why: %v", err)
	}
	if strings.Contains(logs.String(), testKey) || logs.Len() == 0 {
		t.Errorf("logs: %q", logs.String())
	}
}

func TestKeyNeverInErrorsOrLogs(t *testing.T) {
	// A server that echoes the request headers (Authorization included) in its error replies.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := 500
		if r.Header.Get("X-Final") != "" {
			code = 401
		}
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, `{"error":"bad key %s"}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	var logs strings.Builder
	c, _ := newClient(t, srv, func(c *Config) {
		c.MaxAttempts = 3
		c.Logf = func(f string, a ...any) { fmt.Fprintf(&logs, f+"\n", a...) }
	})
	_, err := c.Complete(context.Background(), Request{})
	if err == nil {
		t.Fatal("want an error")
	}
	for what, s := range map[string]string{
		"error": err.Error(), "logs": logs.String(), "%v config": fmt.Sprintf("%v", c.cfg), "%+v config": fmt.Sprintf("%+v", c.cfg),
		"%#v config": fmt.Sprintf("%#v", c.cfg), "%v key": fmt.Sprintf("%v", c.cfg.APIKey), "%q key": fmt.Sprintf("%q", c.cfg.APIKey),
	} {
		if strings.Contains(s, testKey) {
			t.Errorf("the key is in the %s: %s", what, s)
		}
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("the echoed key was not redacted: %v", err)
	}
	js, _ := json.Marshal(struct{ K APIKey }{testKey})
	if strings.Contains(string(js), testKey) {
		t.Errorf("JSON: %s", js)
	}
}

func TestNewChecksConfig(t *testing.T) {
	for _, cfg := range []Config{{BaseURL: "judge:8080", Model: "m"}, {BaseURL: "ftp://x", Model: "m"}, {BaseURL: "http://x"}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

// TestUnavailableEndpointIsProbedAgain: a burst of 429s marks the endpoint unavailable, but not for good: once
// ProbeAfter has passed one call probes it, and its success makes every later call go through; a failed probe, or
// one cut short by its caller, restarts the wait.
func TestUnavailableEndpointIsProbedAgain(t *testing.T) {
	var limited atomic.Bool
	var requests atomic.Int32
	limited.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if limited.Load() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error": "rate limited"}`, http.StatusTooManyRequests)
			return
		}
		_, _ = io.WriteString(w, completion(`{"score": 1}`))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv, func(c *Config) { c.MaxAttempts = 1; c.ProbeAfter = 30 * time.Second })
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	call := func(ctx context.Context) error {
		_, err := c.Complete(ctx, Request{System: "s", User: "u"})
		return err
	}
	fastFail := func(when string) {
		t.Helper()
		before := requests.Load()
		if err := call(context.Background()); !errors.Is(err, ErrUnavailable) || requests.Load() != before {
			t.Fatalf("%s: err = %v, %d requests sent; want ErrUnavailable without a request", when, err, requests.Load()-before)
		}
	}

	for i := range DefaultUnavailableAfter {
		if err := call(context.Background()); err == nil || errors.Is(err, ErrUnavailable) {
			t.Fatalf("call %d: err = %v, want the 429", i, err)
		}
	}
	fastFail("right after the burst")
	limited.Store(false) // the endpoint is back, but nothing has probed it yet
	now = now.Add(29 * time.Second)
	fastFail("before ProbeAfter")

	// A probe cut short by its caller restarts the wait.
	now = now.Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := call(ctx); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("a probe with a cancelled context: err = %v, want the context's", err)
	}
	fastFail("after a probe cut short")

	// A failed probe restarts the wait too.
	limited.Store(true)
	now = now.Add(30 * time.Second)
	if err := call(context.Background()); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("the probe: err = %v, want its 429", err)
	}
	fastFail("after a failed probe")

	// A successful probe closes the breaker for every later call.
	limited.Store(false)
	now = now.Add(30 * time.Second)
	for i := range 3 {
		if err := call(context.Background()); err != nil {
			t.Fatalf("call %d after the endpoint came back: %v", i, err)
		}
	}
}
