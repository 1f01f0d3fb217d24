package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A budget refuses the attempt past it without sending it, and says which budget is spent; the refused call
// reports no call. Each reply of the test server spends 18 tokens.
func TestBudget(t *testing.T) {
	tests := []struct {
		name                 string
		maxRequests, maxToks int64
		failFirst            bool
		wantSent             int64
		wantReq, wantTok     bool
	}{
		{name: "requests", maxRequests: 3, wantSent: 3, wantReq: true},
		{name: "tokens: the reply that reaches them was sent", maxToks: 40, wantSent: 3, wantTok: true},
		{name: "both: requests first", maxRequests: 2, maxToks: 1000, wantSent: 2, wantReq: true},
		{name: "retries count as requests", maxRequests: 3, failFirst: true, wantSent: 3, wantReq: true},
		{name: "none", wantSent: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if sent.Add(1) == 1 && tc.failFirst {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				_, _ = io.WriteString(w, completion(`{"score":1}`))
			}))
			defer srv.Close()
			budget := NewBudget(tc.maxRequests, tc.maxToks)
			c, _ := newClient(t, srv, func(cfg *Config) { cfg.Budget = budget })
			var refused int
			for range 5 {
				reply, err := c.Complete(context.Background(), Request{User: "q"})
				if errors.Is(err, ErrBudgetSpent) {
					refused++
					if reply.Usage.Calls != 0 && !tc.failFirst {
						t.Errorf("a refused call reports %d calls", reply.Usage.Calls)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
			}
			if got := sent.Load(); got != tc.wantSent {
				t.Errorf("sent %d requests, want %d", got, tc.wantSent)
			}
			req, tok := budget.Reached()
			if req != tc.wantReq || tok != tc.wantTok {
				t.Errorf("Reached() = %v, %v, want %v, %v", req, tok, tc.wantReq, tc.wantTok)
			}
			if (tc.wantReq || tc.wantTok) != (refused > 0) {
				t.Errorf("%d calls refused", refused)
			}
		})
	}
}

// Without limits there is no budget, and a nil budget bounds nothing.
func TestNilBudget(t *testing.T) {
	if b := NewBudget(0, 0); b != nil {
		t.Fatalf("NewBudget(0, 0) = %v, want nil", b)
	}
	var b *Budget
	if err := b.take(); err != nil {
		t.Errorf("nil budget: %v", err)
	}
	b.spend(verdict.Usage{TotalTokens: 1})
	if r, k := b.Reached(); r || k {
		t.Error("a nil budget reports a reached budget")
	}
}
