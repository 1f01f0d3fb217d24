package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The two OpenAI wire protocols the server speaks, each plain (one JSON reply) or streamed (server-sent events, the
// way AgentV 4.42's judges ask: its openai provider streams chat completions, its azure provider streams the
// Responses API):
//   - chat completions (POST .../chat/completions): messages [{role, content}] where content is a string or a list of
//     parts {type: text, text}; "stream": true with "stream_options": {"include_usage": true} ends the stream with a
//     usage chunk;
//   - Responses (POST .../responses, e.g. Azure's /openai/v1/responses): "instructions" and "input", a string or a
//     list of messages {role, content} where content is a string or a list of parts {type: input_text, text}.
//
// System ("system" or "developer", as the AI SDKs send it to some models) and user texts are concatenated in order,
// whatever the protocol, so that both ask replies.Hashed and Answer the same thing.

// judgeRequest is what a request asks, whichever protocol it came in.
type judgeRequest struct {
	Model        string
	System, User string
	// Stream is whether the reply is wanted as server-sent events; Usage whether a streamed chat completion ends
	// with a usage chunk.
	Stream, Usage bool
}

// wireMessage is a message of either protocol: its content a string or a list of parts.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentText returns a message content's text: the string, or the text of every text part joined. Parts of other
// types (images) are refused: no judge of this project sends them, and a reply that ignored them would hide it.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor a list of parts: %w", err)
	}
	var b strings.Builder
	for i, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			b.WriteString(p.Text)
		default:
			return "", fmt.Errorf("content part %d has type %q, not text", i, p.Type)
		}
	}
	return b.String(), nil
}

// addMessages appends the system and user texts of msgs to r.
func (r *judgeRequest) addMessages(msgs []wireMessage) error {
	for i, m := range msgs {
		text, err := contentText(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			r.System += text
		case "user":
			r.User += text
		}
	}
	return nil
}

// parseChat reads a chat-completions request body.
func parseChat(body []byte) (judgeRequest, error) {
	var req struct {
		Model         string        `json:"model"`
		Messages      []wireMessage `json:"messages"`
		Stream        bool          `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return judgeRequest{}, err
	}
	if len(req.Messages) == 0 {
		return judgeRequest{}, fmt.Errorf("no messages")
	}
	r := judgeRequest{Model: req.Model, Stream: req.Stream, Usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	return r, r.addMessages(req.Messages)
}

// parseResponses reads a Responses request body.
func parseResponses(body []byte) (judgeRequest, error) {
	var req struct {
		Model        string          `json:"model"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Stream       bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return judgeRequest{}, err
	}
	r := judgeRequest{Model: req.Model, Stream: req.Stream, System: req.Instructions}
	in := bytes.TrimSpace(req.Input)
	switch {
	case len(in) == 0:
		return judgeRequest{}, fmt.Errorf("no input")
	case in[0] == '"':
		if err := json.Unmarshal(in, &r.User); err != nil {
			return judgeRequest{}, err
		}
	default:
		var msgs []wireMessage
		if err := json.Unmarshal(in, &msgs); err != nil {
			return judgeRequest{}, fmt.Errorf("input: %w", err)
		}
		if len(msgs) == 0 {
			return judgeRequest{}, fmt.Errorf("no input")
		}
		if err := r.addMessages(msgs); err != nil {
			return judgeRequest{}, fmt.Errorf("input %w", err)
		}
	}
	return r, nil
}

// usage is the reply's token counts: the prompts' and the reply's words.
type usage struct{ prompt, completion int }

func usageOf(r judgeRequest, content string) usage {
	return usage{prompt: words(r.System + r.User), completion: words(content)}
}

// chunks cuts s into pieces of at most n bytes, never inside a UTF-8 sequence, so that a streamed reply arrives in
// several deltas as a model's does.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// deltaBytes is the size of a streamed reply's pieces.
const deltaBytes = 48

// sse writes server-sent events and flushes each.
type sse struct {
	w   http.ResponseWriter
	err error
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes one event: its name (none when ""), and data, JSON-encoded unless it is a string.
func (s *sse) event(name string, data any) {
	if s.err != nil {
		return
	}
	var b bytes.Buffer
	if name != "" {
		fmt.Fprintf(&b, "event: %s\n", name)
	}
	if str, ok := data.(string); ok {
		fmt.Fprintf(&b, "data: %s\n\n", str)
	} else {
		j, err := json.Marshal(data)
		if err != nil {
			s.err = err
			return
		}
		fmt.Fprintf(&b, "data: %s\n\n", j)
	}
	if _, err := s.w.Write(b.Bytes()); err != nil {
		s.err = err
		return
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// The wire's keys and values that the replies repeat.
const (
	keyObject      = "object"
	keyModel       = "model"
	keyContent     = "content"
	keyResponse    = "response"
	keyOutputIndex = "output_index"
	// objectResponse is a Responses reply's object type.
	objectResponse = "response"
	// messageID is the id of the one message a Responses reply holds.
	messageID = "msg_judgeserver"
)

// writeChat answers a chat-completions request with content.
func writeChat(w http.ResponseWriter, r judgeRequest, content string) error {
	u := usageOf(r, content)
	usageJSON := map[string]any{"prompt_tokens": u.prompt, "completion_tokens": u.completion, "total_tokens": u.prompt + u.completion}
	if !r.Stream {
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(map[string]any{
			"id": "judgeserver-1", keyObject: "chat.completion", keyModel: r.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", keyContent: content}}},
			"usage": usageJSON,
		})
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "judgeserver-1", keyObject: "chat.completion.chunk", "created": 0, keyModel: r.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", keyContent: ""}, nil))
	for _, piece := range chunks(content, deltaBytes) {
		s.event("", chunk(map[string]any{keyContent: piece}, nil))
	}
	s.event("", chunk(map[string]any{}, "stop"))
	if r.Usage {
		s.event("", map[string]any{"id": "judgeserver-1", keyObject: "chat.completion.chunk", "created": 0, keyModel: r.Model,
			"choices": []any{}, "usage": usageJSON})
	}
	s.event("", "[DONE]")
	return s.err
}

// writeResponses answers a Responses request with content.
func writeResponses(w http.ResponseWriter, r judgeRequest, content string) error {
	u := usageOf(r, content)
	part := map[string]any{"type": "output_text", "text": content, "annotations": []any{}}
	item := map[string]any{"type": "message", "id": messageID, "status": "completed", "role": "assistant",
		keyContent: []any{part}}
	response := map[string]any{"id": "resp_judgeserver", keyObject: objectResponse, "created_at": 0, "status": "completed",
		keyModel: r.Model, "output": []any{item},
		"usage": map[string]any{"input_tokens": u.prompt, "output_tokens": u.completion, "total_tokens": u.prompt + u.completion}}
	if !r.Stream {
		w.Header().Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(response)
	}
	s := newSSE(w)
	seq := 0
	ev := func(name string, fields map[string]any) {
		fields["type"] = name
		fields["sequence_number"] = seq
		seq++
		s.event(name, fields)
	}
	inProgress := map[string]any{"id": "resp_judgeserver", keyObject: objectResponse, "created_at": 0, "status": "in_progress",
		keyModel: r.Model, "output": []any{}}
	ev("response.created", map[string]any{keyResponse: inProgress})
	ev("response.in_progress", map[string]any{keyResponse: inProgress})
	ev("response.output_item.added", map[string]any{keyOutputIndex: 0, "item": map[string]any{"type": "message",
		"id": messageID, "status": "in_progress", "role": "assistant", keyContent: []any{}}})
	ev("response.content_part.added", map[string]any{"item_id": messageID, keyOutputIndex: 0, "content_index": 0,
		"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
	for _, piece := range chunks(content, deltaBytes) {
		ev("response.output_text.delta", map[string]any{"item_id": messageID, keyOutputIndex: 0, "content_index": 0,
			"delta": piece})
	}
	ev("response.output_text.done", map[string]any{"item_id": messageID, keyOutputIndex: 0, "content_index": 0,
		"text": content})
	ev("response.content_part.done", map[string]any{"item_id": messageID, keyOutputIndex: 0, "content_index": 0,
		"part": part})
	ev("response.output_item.done", map[string]any{keyOutputIndex: 0, "item": item})
	ev("response.completed", map[string]any{keyResponse: response})
	return s.err
}
