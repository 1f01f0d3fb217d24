package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// judgeModel returns the model LLM judges call for the run's endpoint: a client with the API key read from the
// file the collector mounts. A key that cannot be read, or a client that cannot be built, gives a model that fails
// every call with the reason, so that each LLM judge is an Error that says why. Calls end by deadline (run.json's
// llmJudgeDeadlineSeconds from the start of judging): a case judged after it is an Error, never a stuck run.
// budget, when set, bounds the pod's requests and tokens (the pod's share of spec.judging.llm.maxRequests and
// maxTokens).
func judgeModel(cfg *podwire.LLM, budget *llm.Budget, deadline time.Time, log io.Writer) evaluate.Model {
	var key llm.APIKey
	if cfg.APIKeyFile != "" {
		k, err := llm.ReadKeyFile(cfg.APIKeyFile)
		if err != nil {
			return failingModel{err: fmt.Errorf("the API key (Secret key %s) cannot be read: %w", cfg.APIKeySecret, err)}
		}
		key = k
	}
	c, err := llm.New(llm.Config{
		BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: key,
		Timeout:           podwire.Seconds(cfg.TimeoutSeconds),
		MaxConcurrent:     int(cfg.MaxConcurrentRequests),
		RequestsPerMinute: int(cfg.RequestsPerMinute),
		Budget:            budget,
		Logf: func(format string, args ...any) {
			podwire.Logf(log, format+"\n", args...)
		},
	})
	if err != nil {
		return failingModel{err: err}
	}
	return deadlineModel{inner: c, deadline: deadline}
}

// failingModel fails every call with err.
type failingModel struct{ err error }

func (m failingModel) Complete(context.Context, llm.Request) (llm.Reply, error) {
	return llm.Reply{}, m.err
}

// deadlineModel bounds every call by a deadline.
type deadlineModel struct {
	inner    evaluate.Model
	deadline time.Time
}

func (m deadlineModel) Complete(ctx context.Context, req llm.Request) (llm.Reply, error) {
	if !time.Now().Before(m.deadline) {
		return llm.Reply{}, errors.New("the time for LLM judging is over (sized from the pod's requests, " +
			"spec.judging.llm.maxConcurrentRequests, timeoutSeconds and requestsPerMinute, at most the run's deadline)")
	}
	ctx, cancel := context.WithDeadline(ctx, m.deadline)
	defer cancel()
	return m.inner.Complete(ctx, req)
}
