package check

import (
	"fmt"
	"os"
	"time"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
)

// Environment variables `collector check` reads for LLM judges (the flags win).
const (
	EnvLLMBaseURL = "EVALRUN_LLM_BASE_URL"
	EnvLLMModel   = "EVALRUN_LLM_MODEL"
	// EnvLLMAPIKey holds the API key itself, when --llm-api-key-file is not given.
	EnvLLMAPIKey = "EVALRUN_LLM_API_KEY"
)

// llmFlags are the --llm-* flags.
type llmFlags struct {
	baseURL, model, keyFile          string
	timeout                          time.Duration
	maxConcurrent, requestsPerMinute int
	// runUID keys Nonce answer delimiters (--run-uid).
	runUID string
}

// defaultCheckRunUID keys Nonce answer delimiters when --run-uid is not given: a local check has no run.
const defaultCheckRunUID = "collector-check"

// answerNonceKey is the key of the judging file's Nonce answer delimiters (nil for AgentV's, the default).
func (f llmFlags) answerNonceKey(spec *evalsv1alpha1.LLMJudging) []byte {
	if spec == nil || ptr.Deref(spec.AnswerDelimiters, evalsv1alpha1.DefaultAnswerDelimiters) != evalsv1alpha1.AnswerDelimitersNonce {
		return nil
	}
	uid := f.runUID
	if uid == "" {
		uid = defaultCheckRunUID
	}
	return evaluate.AnswerNonceKey(uid)
}

// client returns the model LLM judges call, and how many cases to judge at once: the flags over the judging file's
// llm block. Without a base URL from either, LLM judges are not run (nil: they are Skipped, as in a run without
// spec.judging.llm). The key comes from --llm-api-key-file or $EVALRUN_LLM_API_KEY only.
func (f llmFlags) client(spec *evalsv1alpha1.LLMJudging) (*llm.Client, int, error) {
	cfg := llm.Config{BaseURL: f.baseURL, Model: f.model, Timeout: f.timeout, MaxConcurrent: f.maxConcurrent,
		RequestsPerMinute: f.requestsPerMinute}
	if spec != nil {
		if cfg.BaseURL == "" {
			cfg.BaseURL = ptr.Deref(spec.BaseURL, "")
		}
		if cfg.Model == "" {
			cfg.Model = ptr.Deref(spec.Model, "")
		}
		if cfg.Timeout == 0 && spec.TimeoutSeconds != nil {
			cfg.Timeout = time.Duration(*spec.TimeoutSeconds) * time.Second
		}
		if cfg.MaxConcurrent == 0 && spec.MaxConcurrentRequests != nil {
			cfg.MaxConcurrent = int(*spec.MaxConcurrentRequests)
		}
		if cfg.RequestsPerMinute == 0 && spec.RequestsPerMinute != nil {
			cfg.RequestsPerMinute = int(*spec.RequestsPerMinute)
		}
		// The judging file's budget holds as in a one-pod run: past it, LLM judges are Skipped.
		cfg.Budget = llm.NewBudget(ptr.Deref(spec.MaxRequests, 0), ptr.Deref(spec.MaxTokens, 0))
	}
	if cfg.BaseURL == "" {
		if spec != nil || f.model != "" || f.keyFile != "" {
			return nil, 0, usageError("LLM judges need a base URL: give --llm-base-url (or $" + EnvLLMBaseURL + ")")
		}
		return nil, 0, nil
	}
	if cfg.Model == "" {
		return nil, 0, usageError("LLM judges need a model: give --llm-model (or $" + EnvLLMModel + ")")
	}
	if cfg.MaxConcurrent < 0 || cfg.RequestsPerMinute < 0 || cfg.Timeout < 0 {
		return nil, 0, usageError("--llm-timeout, --llm-max-concurrent and --llm-requests-per-minute must not be negative")
	}
	switch {
	case f.keyFile != "":
		key, err := llm.ReadKeyFile(f.keyFile)
		if err != nil {
			return nil, 0, fmt.Errorf("reading the API key: %w", err)
		}
		cfg.APIKey = key
	case os.Getenv(EnvLLMAPIKey) != "":
		cfg.APIKey = llm.APIKey(os.Getenv(EnvLLMAPIKey))
	}
	c, err := llm.New(cfg)
	if err != nil {
		return nil, 0, usageError(err.Error())
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = llm.DefaultMaxConcurrent
	}
	return c, cfg.MaxConcurrent, nil
}
