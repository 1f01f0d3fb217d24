package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// reply is long enough to be streamed in several pieces and has multibyte characters at the cuts' reach.
var reply = `{"score":0.7,"assertions":[{"text":"mentions “quicksort” — the pivot","passed":true,"evidence":"é"}],"details":{}}`

// stream is what a client reassembles from a reply: the prompts the server answered (asked), the content, the
// events' names (Responses) or finish reason (chat), and the usage reported.
type stream struct {
	System, User string
	Content      string
	Events       []string
	Finish       string
	Usage        map[string]int
	Done         bool
}

// readSSE reads a server-sent events body into its events: name ("" for none) and data.
func readSSE(t *testing.T, resp *http.Response) [][2]string {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	var events [][2]string
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			events = append(events, [2]string{name, strings.TrimPrefix(line, "data: ")})
			name = ""
		case line == "":
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return events
}

func TestWire(t *testing.T) {
	var asked [2]string
	answer := func(system, user string) string { asked = [2]string{system, user}; return reply }
	words := len(strings.Fields(reply))
	for _, tc := range []struct {
		name, path, body string
		want             stream
	}{{
		name: "chat plain",
		path: "/v1/chat/completions",
		body: `{"model":"m","messages":[{"role":"system","content":"sys"},{"role":"user","content":"one two"}]}`,
		want: stream{System: "sys", User: "one two", Content: reply, Finish: "stop",
			Usage: map[string]int{"prompt_tokens": 2, "completion_tokens": words, "total_tokens": 2 + words}},
	}, {
		name: "chat streamed with usage (AgentV 4.42's openai provider)",
		path: "/v1/chat/completions",
		body: `{"model":"m","messages":[{"role":"developer","content":"sys"},{"role":"user","content":[{"type":"text","text":"one "},{"type":"text","text":"two"}]}],"stream":true,"stream_options":{"include_usage":true},"store":false}`,
		want: stream{System: "sys", User: "one two", Content: reply, Finish: "stop", Done: true,
			Usage: map[string]int{"prompt_tokens": 2, "completion_tokens": words, "total_tokens": 2 + words}},
	}, {
		name: "chat streamed without usage",
		path: "/v1/chat/completions",
		body: `{"model":"m","messages":[{"role":"user","content":"u"}],"stream":true}`,
		want: stream{User: "u", Content: reply, Finish: "stop", Done: true},
	}, {
		name: "responses plain, input a string",
		path: "/openai/v1/responses",
		body: `{"model":"m","instructions":"sys","input":"one two"}`,
		want: stream{System: "sys", User: "one two", Content: reply, Finish: "completed",
			Usage: map[string]int{"input_tokens": 2, "output_tokens": words, "total_tokens": 2 + words}},
	}, {
		name: "responses streamed (AgentV 4.42's azure provider)",
		path: "/openai/v1/responses",
		body: `{"model":"m","input":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"input_text","text":"one two"}]}],"stream":true}`,
		want: stream{System: "sys", User: "one two", Content: reply, Finish: "completed",
			Events: []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
				"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"},
			Usage: map[string]int{"input_tokens": 2, "output_tokens": words, "total_tokens": 2 + words}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := httptest.NewServer(handler("k", &Recorder{Dir: dir}, answer))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer k")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			got := stream{System: asked[0], User: asked[1]}
			if !strings.Contains(tc.body, `"stream":true`) {
				var plain struct {
					Choices []struct {
						Message      struct{ Content string }
						FinishReason string `json:"finish_reason"`
					}
					Status string
					Output []struct {
						Content []struct{ Text string }
					}
					Usage map[string]int
				}
				if err := json.NewDecoder(resp.Body).Decode(&plain); err != nil {
					t.Fatal(err)
				}
				for _, c := range plain.Choices {
					got.Content, got.Finish = c.Message.Content, c.FinishReason
				}
				for _, o := range plain.Output {
					got.Content, got.Finish = o.Content[0].Text, plain.Status
				}
				got.Usage = plain.Usage
			} else {
				seen := map[string]bool{}
				for _, ev := range readSSE(t, resp) {
					if ev[1] == "[DONE]" {
						got.Done = true
						continue
					}
					var data struct {
						Type    string
						Delta   string
						Choices []struct {
							Delta struct {
								Content string
							}
							FinishReason *string `json:"finish_reason"`
						}
						Response struct {
							Status string
							Usage  map[string]int
						}
						Usage map[string]int
					}
					if err := json.Unmarshal([]byte(ev[1]), &data); err != nil {
						t.Fatalf("event %s: %v", ev[1], err)
					}
					if ev[0] != data.Type {
						t.Errorf("event name %q, data type %q", ev[0], data.Type)
					}
					if data.Type != "" && !seen[data.Type] {
						seen[data.Type] = true
						got.Events = append(got.Events, data.Type)
					}
					switch data.Type {
					case "response.output_text.delta":
						got.Content += data.Delta
					case "response.completed":
						got.Finish, got.Usage = data.Response.Status, data.Response.Usage
					}
					for _, c := range data.Choices {
						got.Content += c.Delta.Content
						if c.FinishReason != nil {
							got.Finish = *c.FinishReason
						}
					}
					if data.Usage != nil {
						got.Usage = data.Usage
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			recorded, err := os.ReadFile(filepath.Join(dir, "0001.json"))
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(recorded, &a)
			_ = json.Unmarshal([]byte(tc.body), &b)
			if diff := cmp.Diff(b, a); diff != "" {
				t.Errorf("recorded body (-sent +recorded):\n%s", diff)
			}
		})
	}
}

func TestWireRefusals(t *testing.T) {
	srv := httptest.NewServer(handler("k", nil, func(string, string) string { return "{}" }))
	defer srv.Close()
	for _, tc := range []struct {
		name, method, path, key, body string
		want                          int
	}{
		{"unknown path", http.MethodPost, "/v1/embeddings", "Bearer k", `{}`, http.StatusNotFound},
		{"GET", http.MethodGet, "/v1/chat/completions", "Bearer k", ``, http.StatusNotFound},
		{"wrong key", http.MethodPost, "/v1/chat/completions", "Bearer x", `{"messages":[{"role":"user","content":"u"}]}`, http.StatusUnauthorized},
		{"no messages", http.MethodPost, "/v1/chat/completions", "Bearer k", `{"messages":[]}`, http.StatusBadRequest},
		{"an image part", http.MethodPost, "/v1/chat/completions", "Bearer k", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:"}}]}]}`, http.StatusBadRequest},
		{"content a number", http.MethodPost, "/v1/chat/completions", "Bearer k", `{"messages":[{"role":"user","content":3}]}`, http.StatusBadRequest},
		{"no input", http.MethodPost, "/openai/v1/responses", "Bearer k", `{"model":"m"}`, http.StatusBadRequest},
		{"empty input", http.MethodPost, "/openai/v1/responses", "Bearer k", `{"input":[]}`, http.StatusBadRequest},
		{"an image input", http.MethodPost, "/openai/v1/responses", "Bearer k", `{"input":[{"role":"user","content":[{"type":"input_image"}]}]}`, http.StatusBadRequest},
		{"not JSON", http.MethodPost, "/openai/v1/responses", "Bearer k", `{`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", tc.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	// Azure sends its key as "api-key".
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/openai/v1/responses", strings.NewReader(`{"input":"u"}`))
	req.Header.Set("Api-Key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("api-key header: status %d, want 200", resp.StatusCode)
	}
}

func TestChunks(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("é", 40), reply, strings.Repeat("x", 48), strings.Repeat("😀", 30)} {
		pieces := chunks(s, deltaBytes)
		if strings.Join(pieces, "") != s {
			t.Errorf("chunks of %q do not join back", s)
		}
		for _, p := range pieces {
			if len(p) > deltaBytes || !utf8.ValidString(p) {
				t.Errorf("piece %q of %q: longer than %d or cut inside a character", p, s, deltaBytes)
			}
		}
	}
}

// FuzzWire: any body either is refused or is answered in full, plain or streamed, by both protocols' writers.
func FuzzWire(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"u"}]}],"stream":true,"stream_options":{"include_usage":true}}`,
		`{"model":"m","instructions":"s","input":[{"role":"user","content":[{"type":"input_text","text":"u"}]}],"stream":true}`,
		`{"input":"u"}`, `{"messages":[{"role":"developer","content":null}]}`, `{`, `[]`,
	} {
		f.Add([]byte(seed), "é“x”")
	}
	f.Fuzz(func(t *testing.T, body []byte, content string) {
		for _, p := range []struct {
			parse func([]byte) (judgeRequest, error)
			write func(http.ResponseWriter, judgeRequest, string) error
		}{{parseChat, writeChat}, {parseResponses, writeResponses}} {
			req, err := p.parse(body)
			if err != nil {
				continue
			}
			rec := httptest.NewRecorder()
			if err := p.write(rec, req, content); err != nil {
				t.Fatalf("writing a reply to %q: %v", body, err)
			}
			if !req.Stream {
				if !json.Valid(rec.Body.Bytes()) {
					t.Fatalf("a plain reply is not JSON: %q", rec.Body.String())
				}
				continue
			}
			var got strings.Builder
			for _, line := range strings.Split(rec.Body.String(), "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				var ev struct {
					Type    string
					Delta   string
					Choices []struct{ Delta struct{ Content string } }
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil {
					t.Fatalf("event %q: %v", data, err)
				}
				if ev.Type == "response.output_text.delta" {
					got.WriteString(ev.Delta)
				}
				for _, c := range ev.Choices {
					got.WriteString(c.Delta.Content)
				}
			}
			if utf8.ValidString(content) && got.String() != content {
				t.Fatalf("streamed %q, want %q", got.String(), content)
			}
		}
	})
}
