// Package llm is a small client of an OpenAI-compatible chat-completions API (POST {baseURL}/chat/completions) for
// LLM judges: one system and one user message, a JSON response format, bounded retries with exponential backoff and
// full jitter on 429, 5xx and transport errors (honouring Retry-After), a timeout per attempt, a bound on requests in
// flight shared by every caller of one Client, an optional requests-per-minute limit, and the token usage and
// latency of every call. After several calls in a row failed for an unreachable endpoint, the Client fails the
// next ones at once (ErrUnavailable), so that a run whose endpoint is down ends instead of waiting out every
// case's retries; every ProbeAfter it lets one call through, and a success closes the breaker (a burst of 429s or an
// endpoint that was down for a while does not fail the rest of the run).
//
// The API key is an APIKey: it formats and marshals as "[redacted]", and the Client removes it from every error
// text it returns (a server that echoes the Authorization header cannot leak it through us).
//
// The package is pure Go on net/http and imports no client-go.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

const redacted = "[redacted]"

// APIKey is the endpoint's bearer token. It formats as "[redacted]" with every fmt verb and marshals the same way, so
// a configuration that holds it can be logged or encoded without leaking it; Reveal returns the key.
type APIKey string

// String returns "[redacted]".
func (APIKey) String() string { return redacted }

// GoString returns "[redacted]" quoted, for %#v.
func (APIKey) GoString() string { return `"` + redacted + `"` }

// MarshalText returns "[redacted]" (JSON and YAML use it too).
func (APIKey) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Reveal returns the key itself, for the Authorization header only.
func (k APIKey) Reveal() string { return string(k) }

// Defaults of a Config's zero fields.
const (
	DefaultTimeout       = 60 * time.Second
	DefaultMaxConcurrent = 4
	// DefaultMaxAttempts is how many times one request is sent at most (the first try and 3 retries).
	DefaultMaxAttempts = 4
	// DefaultBaseBackoff is the first retry's backoff ceiling; it doubles with each retry up to MaxBackoff.
	DefaultBaseBackoff = 500 * time.Millisecond
	// MaxBackoff bounds a backoff and a server's Retry-After.
	MaxBackoff = 60 * time.Second
	// DefaultUnavailableAfter is how many calls in a row must fail for an unreachable endpoint (every attempt a
	// transport error, a timeout or a 5xx) before the Client fails calls at once.
	DefaultUnavailableAfter = 3
	// DefaultProbeAfter is how long an unavailable endpoint is failed at once before one call probes it again.
	DefaultProbeAfter = 30 * time.Second
	// maxReplyBytes bounds a reply body.
	maxReplyBytes = 8 << 20
	// maxErrorBody bounds the excerpt of an error reply quoted in an error, in bytes.
	maxErrorBody = 300
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API's base URL, without /chat/completions.
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey APIKey
	// Timeout bounds each attempt (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxConcurrent bounds the attempts in flight across all calls (DefaultMaxConcurrent when 0).
	MaxConcurrent int
	// RequestsPerMinute, when positive, limits the attempts started per minute.
	RequestsPerMinute int
	// MaxAttempts bounds the attempts of one call (DefaultMaxAttempts when 0).
	MaxAttempts int
	// BaseBackoff is the first retry's backoff ceiling (DefaultBaseBackoff when 0).
	BaseBackoff time.Duration
	// UnavailableAfter is how many failed calls in a row mark the endpoint unavailable (DefaultUnavailableAfter
	// when 0; negative: never).
	UnavailableAfter int
	// ProbeAfter is how long the endpoint stays marked unavailable before one call is let through to probe it
	// (DefaultProbeAfter when 0): its success makes the endpoint available again, its failure restarts the wait.
	ProbeAfter time.Duration
	// HTTPClient sends the requests (a client with no timeout of its own when nil: Timeout applies per attempt).
	HTTPClient *http.Client
	// Logf, when set, receives one line per retried attempt (never the key, the prompt or the reply).
	Logf func(format string, args ...any)
	// Budget, when set, bounds the attempts and tokens (shared by every Client given it): an attempt past it is
	// not sent, and Complete returns an error wrapping ErrBudgetSpent.
	Budget *Budget
}

// Request is one chat completion: a system and a user message, answered in JSON.
type Request struct {
	System string
	User   string
}

// Reply is the model's answer to one call.
type Reply struct {
	// Content is the first choice's message content.
	Content string
	// FinishReason is the first choice's finish_reason ("length": the reply was cut at the token limit).
	FinishReason string
	// Usage is what the call cost (the attempts that failed count in Calls and LatencyMs).
	Usage verdict.Usage
}

// ErrUnavailable is returned, wrapped, once the endpoint is marked unavailable.
var ErrUnavailable = errors.New("the model endpoint is unavailable")

// Client calls one endpoint. It is safe for concurrent use; every call shares its concurrency bound and limiter.
type Client struct {
	cfg      Config
	endpoint string
	sem      *semaphore.Weighted
	limiter  *rate.Limiter
	http     *http.Client
	// sleep waits between attempts, now reads the clock (replaced in tests).
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time

	mu          sync.Mutex
	failedInRow int
	lastFailure string
	// openedAt is when the endpoint was last marked unavailable (or its probe failed); probing is true while one
	// call probes it.
	openedAt time.Time
	probing  bool
}

// New returns a Client for cfg; it checks the base URL.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the model endpoint's base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Model == "" {
		return nil, errors.New("the model endpoint has no model name")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = DefaultBaseBackoff
	}
	if cfg.UnavailableAfter == 0 {
		cfg.UnavailableAfter = DefaultUnavailableAfter
	}
	if cfg.ProbeAfter <= 0 {
		cfg.ProbeAfter = DefaultProbeAfter
	}
	c := &Client{
		cfg:      cfg,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		sem:      semaphore.NewWeighted(int64(cfg.MaxConcurrent)),
		http:     cfg.HTTPClient,
		sleep:    sleepCtx,
		now:      time.Now,
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if cfg.RequestsPerMinute > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(float64(cfg.RequestsPerMinute)/60), 1)
	}
	return c, nil
}

// Model is the model name the Client sends.
func (c *Client) Model() string { return c.cfg.Model }

// chatRequest is the request body: exactly these keys.
type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	ResponseFormat responseFormat `json:"response_format"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		TotalTokens      int64 `json:"total_tokens"`
	} `json:"usage"`
}

// Complete sends req and returns the model's reply. It retries 429, 5xx, timeouts and transport errors up to
// MaxAttempts times; any other failure (a 4xx, a reply that is not a chat completion) is returned at once. Errors
// never contain the API key.
func (c *Client) Complete(ctx context.Context, req Request) (Reply, error) {
	start := time.Now()
	var reply Reply
	probe, err := c.unavailable()
	if err != nil {
		return reply, err
	}
	done := false
	if probe {
		// A probe that ends any other way than a success or a counted failure (a permanent error, the caller's
		// context) still ends the probe: the wait starts again.
		defer func() {
			if !done {
				c.probeEnded()
			}
		}()
	}
	body, err := json.Marshal(chatRequest{
		Model:          c.cfg.Model,
		Messages:       []chatMessage{{Role: "system", Content: req.System}, {Role: "user", Content: req.User}},
		ResponseFormat: responseFormat{Type: "json_object"},
	})
	if err != nil {
		return reply, fmt.Errorf("encoding the request: %w", err)
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		res, retryAfter, err := c.attempt(ctx, body)
		if errors.Is(err, ErrBudgetSpent) {
			// Not sent: the caller skips what it asked.
			reply.Usage.LatencyMs = time.Since(start).Milliseconds()
			return reply, err
		}
		c.cfg.Budget.spend(res.Usage)
		reply.Usage.Calls++
		if err == nil {
			res.Usage.Calls = reply.Usage.Calls
			res.Usage.LatencyMs = time.Since(start).Milliseconds()
			c.succeeded()
			done = true
			return res, nil
		}
		lastErr = err
		var perm *permanentError
		if errors.As(err, &perm) || ctx.Err() != nil {
			break
		}
		if attempt >= c.cfg.MaxAttempts {
			c.failed(err)
			done = true
			break
		}
		wait := backoff(c.cfg.BaseBackoff, attempt)
		if retryAfter > 0 {
			wait = min(retryAfter, MaxBackoff)
		}
		if c.cfg.Logf != nil {
			c.cfg.Logf("Retrying a model request: attempt=%d wait=%s error=%q", attempt, wait, c.redact(err.Error()))
		}
		if err := c.sleep(ctx, wait); err != nil {
			break
		}
	}
	reply.Usage.LatencyMs = time.Since(start).Milliseconds()
	msg := c.redact(lastErr.Error())
	if ctx.Err() != nil {
		msg += " (" + ctx.Err().Error() + ")"
	}
	return reply, fmt.Errorf("model request to %s failed after %d attempt(s): %s", c.endpoint, reply.Usage.Calls, msg)
}

// permanentError is a failure a retry cannot fix.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// attempt sends one request, within the concurrency bound and the rate limit. retryAfter is the server's
// Retry-After of a retryable reply (0 when absent).
func (c *Client) attempt(ctx context.Context, body []byte) (Reply, time.Duration, error) {
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx); err != nil {
			return Reply{}, 0, fmt.Errorf("waiting for the requests-per-minute limit: %w", err)
		}
	}
	if err := c.sem.Acquire(ctx, 1); err != nil {
		return Reply{}, 0, err
	}
	defer c.sem.Release(1)
	// The budget is checked once the attempt may be sent, so that the tokens of the replies it waited for count.
	if err := c.cfg.Budget.take(); err != nil {
		return Reply{}, 0, err
	}

	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return Reply{}, 0, &permanentError{msg: "building the request: " + err.Error()}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey.Reveal())
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Reply{}, 0, fmt.Errorf("no reply within the request timeout of %s", c.cfg.Timeout)
		}
		return Reply{}, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Reply{}, 0, fmt.Errorf("the reply did not complete within the request timeout of %s", c.cfg.Timeout)
		}
		return Reply{}, 0, fmt.Errorf("reading the reply: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return Reply{}, retryAfter(resp.Header.Get("Retry-After"), time.Now()),
			fmt.Errorf("HTTP %d: %s", resp.StatusCode, excerpt(data))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Reply{}, 0, &permanentError{msg: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, excerpt(data))}
	}
	if len(data) > maxReplyBytes {
		return Reply{}, 0, &permanentError{msg: fmt.Sprintf("the reply is larger than %d bytes", maxReplyBytes)}
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return Reply{}, 0, &permanentError{msg: fmt.Sprintf("the reply is not a chat completion (%v): %s", err, excerpt(data))}
	}
	if len(cr.Choices) == 0 || cr.Choices[0].Message.Content == nil {
		return Reply{}, 0, &permanentError{msg: "the reply has no choices[0].message.content: " + excerpt(data)}
	}
	out := Reply{Content: *cr.Choices[0].Message.Content, FinishReason: cr.Choices[0].FinishReason}
	if cr.Usage != nil {
		out.Usage.PromptTokens, out.Usage.CompletionTokens, out.Usage.TotalTokens =
			max(cr.Usage.PromptTokens, 0), max(cr.Usage.CompletionTokens, 0), max(cr.Usage.TotalTokens, 0)
	}
	return out, 0, nil
}

// unavailable returns ErrUnavailable, wrapped with the last failure, once UnavailableAfter calls in a row failed,
// until ProbeAfter has passed: then it lets one call through as the probe (probe true) while the others still fail
// at once.
func (c *Client) unavailable() (probe bool, err error) {
	if c.cfg.UnavailableAfter < 0 {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failedInRow < c.cfg.UnavailableAfter {
		return false, nil
	}
	if !c.probing && c.now().Sub(c.openedAt) >= c.cfg.ProbeAfter {
		c.probing = true
		return true, nil
	}
	return false, fmt.Errorf("%w: %d calls in a row failed after every retry, the last with: %s (not retried; probed again %s after the last failure)",
		ErrUnavailable, c.failedInRow, c.lastFailure, c.cfg.ProbeAfter)
}

func (c *Client) failed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failedInRow++
	c.lastFailure = excerptString(c.redact(err.Error()))
	c.openedAt, c.probing = c.now(), false
}

func (c *Client) succeeded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failedInRow, c.probing = 0, false
}

// probeEnded ends a probe that neither succeeded nor counted as a failure: the endpoint stays unavailable and the
// wait for the next probe starts again.
func (c *Client) probeEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.openedAt, c.probing = c.now(), false
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if k := c.cfg.APIKey.Reveal(); k != "" {
		s = strings.ReplaceAll(s, k, redacted)
	}
	return s
}

// backoff is the wait before retry n (1-based): a uniformly random duration up to base*2^(n-1), capped at
// MaxBackoff ("full jitter"), and at least a millisecond.
func backoff(base time.Duration, n int) time.Duration {
	ceiling := base << min(n-1, 20)
	if ceiling <= 0 || ceiling > MaxBackoff {
		ceiling = MaxBackoff
	}
	return time.Millisecond + rand.N(ceiling) //nolint:gosec // jitter, not a secret
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date; 0 when absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n != n {
			return 0
		}
		return min(time.Duration(n*float64(time.Second)), MaxBackoff)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, MaxBackoff)
		}
	}
	return 0
}

func excerpt(data []byte) string { return excerptString(string(data)) }

func excerptString(s string) string { return textbound.Head(strings.TrimSpace(s), maxErrorBody) }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxKeyBytes bounds an API key file.
const maxKeyBytes = 16 << 10

// ReadKeyFile reads an API key from a file (a mounted Secret key), without surrounding whitespace. An empty file is
// an error.
func ReadKeyFile(path string) (APIKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxKeyBytes {
		return "", fmt.Errorf("%s is larger than %d bytes", path, maxKeyBytes)
	}
	key := strings.TrimSpace(string(data))
	if key == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return APIKey(key), nil
}
