package verdict

// Usage is the token usage of one or more calls and the time they took.
type Usage struct {
	// Calls counts the attempts sent (retries included).
	Calls            int64 `json:"calls"`
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
	// LatencyMs is the time from the first attempt to the reply, backoff included, in milliseconds.
	LatencyMs int64 `json:"latencyMs"`
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) {
	u.Calls += u2.Calls
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.TotalTokens += u2.TotalTokens
	u.LatencyMs += u2.LatencyMs
}
