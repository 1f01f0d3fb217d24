package llm

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// ErrBudgetSpent is returned, wrapped, when a request would pass the Budget: the caller skips what it wanted to
// ask instead of failing.
var ErrBudgetSpent = errors.New("the LLM judging budget is spent")

// Budget bounds the requests (attempts, retries included) and tokens of every Client that shares it. Requests are
// counted before they are sent, so maxRequests is never passed; tokens are known only from the replies, so the
// requests in flight when the token budget is reached may pass it (by at most what MaxConcurrent replies spend).
// A nil *Budget bounds nothing. It is safe for concurrent use.
type Budget struct {
	maxRequests, maxTokens int64
	requests, tokens       atomic.Int64
	requestsHit, tokensHit atomic.Bool
}

// NewBudget returns a budget of maxRequests requests and maxTokens tokens; a limit <= 0 is no limit. It returns
// nil when neither is set.
func NewBudget(maxRequests, maxTokens int64) *Budget {
	if maxRequests <= 0 && maxTokens <= 0 {
		return nil
	}
	return &Budget{maxRequests: maxRequests, maxTokens: maxTokens}
}

// take reserves one request, or says which budget is spent.
func (b *Budget) take() error {
	if b == nil {
		return nil
	}
	if b.maxTokens > 0 {
		if used := b.tokens.Load(); used >= b.maxTokens {
			b.tokensHit.Store(true)
			return fmt.Errorf("%w: the replies spent %d tokens of the pod's %d (spec.judging.llm.maxTokens)", ErrBudgetSpent, used, b.maxTokens)
		}
	}
	if b.maxRequests > 0 {
		if n := b.requests.Add(1); n > b.maxRequests {
			b.requests.Add(-1)
			b.requestsHit.Store(true)
			return fmt.Errorf("%w: the pod sent its %d requests (spec.judging.llm.maxRequests)", ErrBudgetSpent, b.maxRequests)
		}
	}
	return nil
}

// spend counts a reply's tokens: its total, or prompt plus completion tokens when the endpoint gave no total.
func (b *Budget) spend(u verdict.Usage) {
	if b == nil {
		return
	}
	n := max(u.TotalTokens, u.PromptTokens+u.CompletionTokens, 0)
	if n > 0 {
		b.tokens.Add(n)
	}
}

// Reached reports whether a request was refused because the request budget or the token budget was spent.
func (b *Budget) Reached() (requests, tokens bool) {
	if b == nil {
		return false, false
	}
	return b.requestsHit.Load(), b.tokensHit.Load()
}
