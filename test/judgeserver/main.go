// Command judgeserver is a small deterministic OpenAI-compatible server for the end-to-end tests of LLM judges and
// for recording AgentV's judge requests: it answers POST .../chat/completions and POST .../responses (the Responses
// API, e.g. Azure's /openai/v1/responses), each plain or streamed as server-sent events ("stream": true), from rules
// on the prompt, never from a model (wire.go has the protocols).
//
// Rules (the prompts are the ones internal/evaluate sends, AgentV's):
//   - A rubric prompt (the system prompt asks for "checks"): each rubric line "- [id]...: description" of the
//     "[[ ## rubrics ## ]]" section is satisfied when the description has no double-quoted keyword, or the candidate
//     answer contains that keyword (case-insensitive).
//   - Any other prompt: score 1 when the expected outcome's double-quoted keyword (if any) is in the candidate
//     answer, else 0.
//   - A candidate answer containing JUDGE-MALFORMED gets a reply that is not JSON (the judge must report Error).
//
// With --api-key-file (or JUDGE_API_KEY), requests without "Authorization: Bearer <key>" (or Azure's
// "api-key: <key>") get 401. Usage counts are the prompt's and the reply's words. It serves /healthz for probes and
// logs one line per request (never the key).
//
// With --record DIR it writes every request body it answers, indented, to DIR/0001.json, DIR/0002.json, ... in the
// order they arrive (hack/agentv-oracle.sh and hack/agentv442-oracle.sh record what AgentV sends this way).
//
// With --replies hashed it answers every prompt with replies.Hashed instead (a reply that is a function of the
// prompts alone, the path given with --bundle-root written /BUNDLE first, in the reply schema the prompt asks for):
// hack/agentv-oracle.sh and hack/agentv442-oracle.sh record AgentV v2.0.1 and 4.42.4 so, and internal/check's
// TestAgentVExamples asks the operator the same way and compares the scores.
//
// With --black-hole ADDR it also listens on ADDR as a dependency that hangs: it accepts every TCP connection and
// never answers nor closes it (the hung bucket or LLM endpoint of the fault tests).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/evalrun-operator/evalrun-operator/test/judgeserver/replies"
)

func main() {
	listen := flag.String("listen", ":8080", "address to listen on")
	keyFile := flag.String("api-key-file", "", "file holding the API key requests must send (default $JUDGE_API_KEY; none: no check)")
	blackHole := flag.String("black-hole", "", "also listen on this address, accepting connections and never answering them")
	record := flag.String("record", "", "write every request body to this directory, numbered in arrival order")
	mode := flag.String("replies", "rules", "how replies are made: rules (the keyword rules) or hashed (replies.Hashed)")
	bundleRoot := flag.String("bundle-root", "", "with --replies hashed, the path written /BUNDLE before hashing")
	flag.Parse()
	answer := Answer
	switch *mode {
	case "rules":
	case "hashed":
		answer = func(system, user string) string { return replies.Hashed(system, user, *bundleRoot) }
	default:
		log.Fatalf("judgeserver: --replies must be rules or hashed, got %q", *mode)
	}
	if *blackHole != "" {
		ln, err := net.Listen("tcp", *blackHole)
		if err != nil {
			log.Fatalf("judgeserver: %v", err)
		}
		log.Printf("judgeserver: black hole on %s", *blackHole)
		go swallow(ln)
	}
	key := os.Getenv("JUDGE_API_KEY")
	if *keyFile != "" {
		b, err := os.ReadFile(*keyFile)
		if err != nil {
			log.Fatalf("judgeserver: %v", err)
		}
		key = strings.TrimSpace(string(b))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	var rec *Recorder
	if *record != "" {
		if err := os.MkdirAll(*record, 0o755); err != nil {
			log.Fatalf("judgeserver: %v", err)
		}
		rec = &Recorder{Dir: *record}
	}
	mux.Handle("/", handler(key, rec, answer))
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("judgeserver: listening on %s (key check %v)", *listen, key != "")
	log.Fatal(srv.ListenAndServe())
}

// swallow accepts every connection on ln and holds it open without reading or writing, for ever.
func swallow(ln net.Listener) {
	var held []net.Conn
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatalf("judgeserver: black hole: %v", err)
		}
		held = append(held, c)
		log.Printf("judgeserver: black hole holds %d connections", len(held))
	}
}

// Recorder writes request bodies to Dir, numbered from 1 in arrival order. Safe for concurrent use.
type Recorder struct {
	Dir string
	mu  sync.Mutex
	n   int
}

// Record writes body, indented, as the next numbered file.
func (r *Recorder) Record(body []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return fmt.Errorf("recording a request: %w", err)
	}
	buf.WriteByte('\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	name := filepath.Join(r.Dir, fmt.Sprintf("%04d.json", r.n))
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("recording a request: %w", err)
	}
	return nil
}

// handler answers chat-completions and Responses requests (wire.go), plain or streamed, with answer(system, user);
// rec, when not nil, records each body before it is answered.
func handler(key string, rec *Recorder, answer func(system, user string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			parse func([]byte) (judgeRequest, error)
			write func(http.ResponseWriter, judgeRequest, string) error
		)
		switch {
		case r.Method != http.MethodPost:
			http.NotFound(w, r)
			return
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			parse, write = parseChat, writeChat
		case strings.HasSuffix(r.URL.Path, "/responses"):
			parse, write = parseResponses, writeResponses
		default:
			http.NotFound(w, r)
			return
		}
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("Api-Key") != key {
			log.Printf("judgeserver: 401 path=%s", r.URL.Path)
			http.Error(w, `{"error":{"message":"invalid API key"}}`, http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		var req judgeRequest
		if err == nil {
			req, err = parse(body)
		}
		if err != nil {
			log.Printf("judgeserver: 400 path=%s: %v", r.URL.Path, err)
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if rec != nil {
			if err := rec.Record(body); err != nil {
				log.Printf("judgeserver: %v", err)
				http.Error(w, `{"error":{"message":"recording failed"}}`, http.StatusInternalServerError)
				return
			}
		}
		content := answer(req.System, req.User)
		log.Printf("judgeserver: 200 path=%s model=%s stream=%v reply=%.120q", r.URL.Path, req.Model, req.Stream, content)
		if err := write(w, req, content); err != nil {
			log.Printf("judgeserver: writing the reply: %v", err)
		}
	})
}

var (
	quoted     = regexp.MustCompile(`"([^"]+)"`)
	rubricLine = regexp.MustCompile(`^- \[([^\]]+)\][^:]*: (.*)$`)
)

// Answer is the reply's content for a system and a user prompt.
func Answer(system, user string) string {
	candidate := section(user, "candidate_answer")
	if strings.Contains(candidate, "JUDGE-MALFORMED") {
		return "I would rather not answer in JSON."
	}
	if strings.Contains(system, `"checks"`) {
		type check struct {
			ID        string `json:"id"`
			Satisfied bool   `json:"satisfied"`
			Reasoning string `json:"reasoning"`
		}
		var checks []check
		for _, line := range strings.Split(section(user, "rubrics"), "\n") {
			m := rubricLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			ok, why := keywordIn(m[2], candidate)
			checks = append(checks, check{ID: m[1], Satisfied: ok, Reasoning: why})
		}
		b, _ := json.Marshal(map[string]any{"checks": checks, "overall_reasoning": fmt.Sprintf("checked %d rubrics by keyword", len(checks))})
		return string(b)
	}
	ok, why := keywordIn(section(user, "expected_outcome"), candidate)
	score := 0.0
	hits, misses := []string{}, []string{}
	if ok {
		score = 1
		hits = append(hits, why)
	} else {
		misses = append(misses, why)
	}
	b, _ := json.Marshal(map[string]any{"score": score, "hits": hits, "misses": misses, "reasoning": why})
	return string(b)
}

// keywordIn reports whether the double-quoted keyword of text (if any) is in candidate.
func keywordIn(text, candidate string) (bool, string) {
	m := quoted.FindStringSubmatch(text)
	if m == nil {
		return true, "no keyword to look for"
	}
	if strings.Contains(strings.ToLower(candidate), strings.ToLower(m[1])) {
		return true, fmt.Sprintf("the answer contains %q", m[1])
	}
	return false, fmt.Sprintf("the answer lacks %q", m[1])
}

// section returns the text after "[[ ## name ## ]]" up to the next such header.
func section(prompt, name string) string {
	_, rest, ok := strings.Cut(prompt, "[[ ## "+name+" ## ]]\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n[[ ## "); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(rest)
}

func words(s string) int { return len(strings.Fields(s)) }
