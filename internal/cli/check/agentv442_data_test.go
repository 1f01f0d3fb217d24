package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/test/judgeserver/replies"
)

// AgentV 4.42.4's oracle (testdata/agentv442, recorded by hack/agentv442-oracle.sh; its README.md says how to read
// it). TestAgentV442Recordings keeps the recordings whole and consistent with each other; TestAgentV442Parity
// (agentv442_parity_test.go) compares the operator's judging with them.

const agentv442Dir = "testdata/agentv442"

// agentv442Suite is a line of suites.txt: an eval file below features/ and the tests it runs (all when none).
type agentv442Suite struct {
	Path  string
	Tests []string
}

// Key is the suite's directory below recordings/: EXAMPLE/NAME, NAME the eval file's name without ".yaml".
func (s agentv442Suite) Key() string {
	example, _, _ := strings.Cut(s.Path, "/")
	return example + "/" + strings.TrimSuffix(path.Base(s.Path), ".yaml")
}

func (s agentv442Suite) Example() string {
	example, _, _ := strings.Cut(s.Path, "/")
	return example
}

type agentv442Assertion struct {
	Text     string  `json:"text"`
	Passed   bool    `json:"passed"`
	Evidence *string `json:"evidence,omitempty"`
}

// agentv442Grader is a grader's result in results.jsonl (hack/agentv442/normalize.py writes them).
type agentv442Grader struct {
	Name       string               `json:"name"`
	Type       string               `json:"type"`
	Score      float64              `json:"score"`
	Weight     *float64             `json:"weight"`
	Verdict    string               `json:"verdict"`
	Assertions []agentv442Assertion `json:"assertions"`
	Details    map[string]any       `json:"details"`
	Request    string               `json:"request"`
	Grader     string               `json:"grader"`
	Input      map[string]any       `json:"input"`
	Scores     []agentv442Grader    `json:"scores"`
}

// agentv442Result is a test's result in results.jsonl.
type agentv442Result struct {
	TestID          string               `json:"test_id"`
	Suite           string               `json:"suite"`
	Target          string               `json:"target"`
	Score           float64              `json:"score"`
	ExecutionStatus string               `json:"execution_status"`
	Pass            bool                 `json:"pass"`
	ConversationID  string               `json:"conversation_id"`
	Error           string               `json:"error"`
	FailureStage    string               `json:"failure_stage"`
	FailureReason   string               `json:"failure_reason_code"`
	DurationMS      *float64             `json:"duration_ms"`
	TokenUsage      map[string]float64   `json:"token_usage"`
	CostUSD         *float64             `json:"cost_usd"`
	Request         string               `json:"request"`
	Assertions      []agentv442Assertion `json:"assertions"`
	Scores          []agentv442Grader    `json:"scores"`
}

// agentv442Request is a recorded judge request: AgentV's openai provider streams chat completions.
type agentv442Request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Store *bool `json:"store"`
}

func readAgentV442Suites(t *testing.T) []agentv442Suite {
	t.Helper()
	var suites []agentv442Suite
	for n, line := range readLines(t, filepath.Join(agentv442Dir, "suites.txt")) {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if !strings.Contains(f[0], "/") || !strings.HasSuffix(f[0], ".yaml") {
			t.Fatalf("suites.txt:%d: %q is not an eval file below features/", n+1, f[0])
		}
		suites = append(suites, agentv442Suite{Path: f[0], Tests: f[1:]})
	}
	return suites
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// decodeStrict decodes one JSON value, refusing fields the type does not name: a change of the recordings' format
// must change this test too.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// fileRef matches the file references of AgentV's judge prompts for a CLI target.
var fileRef = regexp.MustCompile(`<file: path="([^"]*)">`)

func TestAgentV442Recordings(t *testing.T) {
	suites := readAgentV442Suites(t)
	if len(suites) < 30 {
		t.Fatalf("suites.txt names %d suites, want the 31 of the parity set", len(suites))
	}

	t.Run("files", func(t *testing.T) {
		listed := map[string]bool{}
		for _, line := range readLines(t, filepath.Join(agentv442Dir, "files.txt")) {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			listed[line] = true
		}
		var onDisk []string
		root := filepath.Join(agentv442Dir, "features")
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if !strings.HasPrefix(rel, "evalrun-extra/") {
				onDisk = append(onDisk, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for f := range listed {
			want = append(want, f)
		}
		sort.Strings(want)
		sort.Strings(onDisk)
		if diff := cmp.Diff(want, onDisk); diff != "" {
			t.Errorf("files.txt (-) against AgentV's files in features/ (+):\n%s", diff)
		}
		notice, err := os.ReadFile(filepath.Join(agentv442Dir, "NOTICE"))
		if err != nil || !bytes.Contains(notice, []byte("MIT License")) || !bytes.Contains(notice, []byte("Copyright (c) 2025 EntityProcess")) {
			t.Errorf("NOTICE does not carry AgentV's licence (%v)", err)
		}
	})

	keys := map[string]bool{}
	for _, s := range suites {
		keys[s.Key()] = true
	}
	t.Run("no recording without a suite", func(t *testing.T) {
		dirs, _ := filepath.Glob(filepath.Join(agentv442Dir, "recordings", "*", "*"))
		for _, d := range dirs {
			rel, _ := filepath.Rel(filepath.Join(agentv442Dir, "recordings"), d)
			if !keys[filepath.ToSlash(rel)] {
				t.Errorf("recordings/%s belongs to no suite of suites.txt", rel)
			}
		}
	})

	answers := map[string]map[string]bool{}
	var totals struct{ tests, requests, graders int }
	for _, s := range suites {
		t.Run(s.Key(), func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(agentv442Dir, "features", s.Path)); err != nil {
				t.Fatalf("the suite's eval file: %v", err)
			}
			if answers[s.Example()] == nil {
				answers[s.Example()] = readAgentV442Answers(t, s.Example())
			}
			dir := filepath.Join(agentv442Dir, "recordings", s.Key())
			results := readAgentV442Results(t, dir)
			c := agentv442Checker{t: t, dir: dir, used: map[string]int{}}
			var ids []string
			for i, r := range results {
				where := fmt.Sprintf("results.jsonl:%d (%s)", i+1, r.TestID)
				ids = append(ids, r.TestID)
				if !answers[s.Example()][r.TestID] {
					t.Errorf("%s: answers/%s.jsonl has no answer for it", where, s.Example())
				}
				c.result(where, r)
			}
			if len(s.Tests) > 0 {
				if diff := cmp.Diff(s.Tests, ids); diff != "" {
					t.Errorf("the tests AgentV ran (+) are not those suites.txt names (-):\n%s", diff)
				}
			}
			if dup := duplicates(ids); len(dup) > 0 {
				t.Errorf("tests with more than one result: %v", dup)
			}
			c.allUsedOnce()
			totals.tests += len(results)
			totals.requests += c.requests
			totals.graders += c.graders
		})
	}
	t.Logf("%d suites: %d tests, %d judge requests, %d code grader runs", len(suites), totals.tests, totals.requests, totals.graders)
}

func duplicates(ids []string) []string {
	seen := map[string]int{}
	var dup []string
	for _, id := range ids {
		if seen[id]++; seen[id] == 2 {
			dup = append(dup, id)
		}
	}
	return dup
}

func readAgentV442Answers(t *testing.T, example string) map[string]bool {
	t.Helper()
	name := filepath.Join(agentv442Dir, "answers", example+".jsonl")
	ids := map[string]bool{}
	for n, line := range readLines(t, name) {
		var rec struct {
			ID         string          `json:"id"`
			Text       *string         `json:"text"`
			Output     json.RawMessage `json:"output"`
			DurationMS *float64        `json:"duration_ms"`
			TokenUsage json.RawMessage `json:"token_usage"`
			CostUSD    *float64        `json:"cost_usd"`
		}
		if err := decodeStrict([]byte(line), &rec); err != nil {
			t.Fatalf("%s:%d: %v", name, n+1, err)
		}
		switch {
		case rec.ID == "" || ids[rec.ID]:
			t.Errorf("%s:%d: id %q is empty or answered twice", name, n+1, rec.ID)
		case (rec.Text == nil) == (rec.Output == nil):
			t.Errorf("%s:%d: an answer has text or output, one of them", name, n+1)
		case rec.DurationMS == nil:
			t.Errorf("%s:%d: no duration_ms (AgentV would time the run and the durations would differ)", name, n+1)
		}
		ids[rec.ID] = true
	}
	return ids
}

func readAgentV442Results(t *testing.T, dir string) []agentv442Result {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var results []agentv442Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var r agentv442Result
		if err := decodeStrict(sc.Bytes(), &r); err != nil {
			t.Fatalf("results.jsonl:%d: %v", n, err)
		}
		results = append(results, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatal("results.jsonl has no result")
	}
	return results
}

// agentv442Checker checks a suite's results against its recorded requests and code grader runs.
type agentv442Checker struct {
	t                 *testing.T
	dir               string
	used              map[string]int
	requests, graders int
}

func (c *agentv442Checker) result(where string, r agentv442Result) {
	t := c.t
	if r.Target != "batch" || r.Suite == "" {
		t.Errorf("%s: target %q, suite %q: want the batch target and a suite name", where, r.Target, r.Suite)
	}
	if r.Score < 0 || r.Score > 1 || math.IsNaN(r.Score) {
		t.Errorf("%s: score %v out of [0, 1]", where, r.Score)
	}
	if r.ExecutionStatus != "ok" && r.ExecutionStatus != "quality_failure" {
		t.Errorf("%s: execution status %q (the oracle records no execution error)", where, r.ExecutionStatus)
	}
	if r.Pass != (r.ExecutionStatus == "ok") {
		t.Errorf("%s: pass %v with status %q", where, r.Pass, r.ExecutionStatus)
	}
	if r.DurationMS == nil {
		t.Errorf("%s: no duration_ms", where)
	}
	switch {
	case len(r.Scores) == 0 && r.Request == "":
		t.Errorf("%s: neither graders nor the implicit llm-grader's request", where)
	case len(r.Scores) > 0 && r.Request != "":
		t.Errorf("%s: graders and an implicit llm-grader's request", where)
	case r.Request != "":
		// The implicit llm-grader: the test's score and assertions are the judge's reply.
		reply := c.freeformReply(where, r.Request)
		if !near(reply.Score, r.Score) {
			t.Errorf("%s: score %v, but the judge replied %v to %s", where, r.Score, reply.Score, r.Request)
		}
		if diff := cmp.Diff(reply.Assertions, r.Assertions); diff != "" {
			t.Errorf("%s: assertions (-replied +recorded):\n%s", where, diff)
		}
	}
	for _, g := range r.Scores {
		c.grader(where+": "+g.Name, g)
	}
}

func (c *agentv442Checker) grader(where string, g agentv442Grader) {
	t := c.t
	if g.Name == "" || g.Type == "" {
		t.Errorf("%s: a grader without name or type", where)
	}
	if g.Score < 0 || g.Score > 1 || math.IsNaN(g.Score) {
		t.Errorf("%s: score %v out of [0, 1]", where, g.Score)
	}
	if !slices.Contains([]string{"pass", "fail"}, g.Verdict) {
		t.Errorf("%s: verdict %q (the oracle records no skipped grader)", where, g.Verdict)
	}
	if g.Weight != nil && *g.Weight < 0 {
		t.Errorf("%s: weight %v", where, *g.Weight)
	}
	if g.Request != "" && g.Grader != "" {
		t.Errorf("%s: both a judge request and a code grader run", where)
	}
	if g.Request != "" {
		c.llmGrader(where, g)
	}
	if g.Grader != "" {
		c.codeGrader(where, g)
	}
	if g.Type == "composite" && len(g.Scores) == 0 {
		t.Errorf("%s: a composite without members", where)
	}
	for _, m := range g.Scores {
		c.grader(where+"/"+m.Name, m)
	}
}

// freeformReply is AgentV 4.42's freeform reply schema.
type freeformReply struct {
	Score      float64              `json:"score"`
	Assertions []agentv442Assertion `json:"assertions"`
	Details    map[string]any       `json:"details"`
}

// request reads a recorded judge request and returns its system and user prompts.
func (c *agentv442Checker) request(where, name string) (system, user string) {
	t := c.t
	c.use(where, name)
	c.requests++
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var req agentv442Request
	if err := decodeStrict(b, &req); err != nil {
		t.Fatalf("%s: %s: %v", where, name, err)
	}
	if req.Model != "oracle-model" || !req.Stream || !req.StreamOptions.IncludeUsage || req.Store == nil || *req.Store ||
		len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Errorf("%s: %s is not a streamed chat completion of a system and a user message", where, name)
		return "", ""
	}
	system, user = req.Messages[0].Content, req.Messages[1].Content
	for _, m := range fileRef.FindAllStringSubmatch(user, -1) {
		rel, ok := strings.CutPrefix(m[1], replies.BundlePlaceholder+"/")
		if !ok {
			t.Errorf("%s: %s refers to %s, not a file of the bundle (/BUNDLE/...)", where, name, m[1])
			continue
		}
		if _, err := os.Stat(filepath.Join(agentv442Dir, "features", rel)); err != nil {
			t.Errorf("%s: %s refers to a file features/ lacks: %v", where, name, err)
		}
	}
	return system, user
}

func (c *agentv442Checker) freeformReply(where, name string) freeformReply {
	system, user := c.request(where, name)
	var reply freeformReply
	if err := json.Unmarshal([]byte(replies.Hashed(system, user, "")), &reply); err != nil {
		c.t.Fatalf("%s: the reply to %s: %v", where, name, err)
	}
	return reply
}

// llmGrader checks a grader's result against the reply the judge server made to its recorded request.
func (c *agentv442Checker) llmGrader(where string, g agentv442Grader) {
	t := c.t
	system, user := c.request(where, g.Request)
	reply := replies.Hashed(system, user, "")
	switch {
	case strings.Contains(system, `"score": integer (0-10)`):
		var r struct {
			Checks []struct {
				ID    string  `json:"id"`
				Score float64 `json:"score"`
			} `json:"checks"`
		}
		_ = json.Unmarshal([]byte(reply), &r)
		want := map[string]any{}
		for _, ch := range r.Checks {
			want[ch.ID] = ch.Score
		}
		if diff := cmp.Diff(want, g.Details["raw_scores"]); diff != "" {
			t.Errorf("%s: raw scores (-replied +recorded):\n%s", where, diff)
		}
	case strings.Contains(system, `"checks"`):
		var r struct {
			Checks []struct {
				ID        string `json:"id"`
				Satisfied bool   `json:"satisfied"`
			} `json:"checks"`
		}
		_ = json.Unmarshal([]byte(reply), &r)
		if len(r.Checks) != len(g.Assertions) {
			t.Errorf("%s: %d assertions for the %d rubric checks replied", where, len(g.Assertions), len(r.Checks))
			return
		}
		for i, ch := range r.Checks {
			if !strings.HasPrefix(g.Assertions[i].Text, "["+ch.ID+"] ") {
				t.Errorf("%s: assertion %q is not rubric %s's", where, g.Assertions[i].Text, ch.ID)
			}
		}
	case strings.Contains(system, `"assertions"`):
		var r freeformReply
		_ = json.Unmarshal([]byte(reply), &r)
		// A negated grader's score is 1 - the reply's; its details are the reply's either way.
		if !near(r.Score, g.Score) && !near(1-r.Score, g.Score) {
			t.Errorf("%s: score %v, but the judge replied %v", where, g.Score, r.Score)
		}
		if g.Type == "llm-grader" {
			if diff := cmp.Diff(r.Details, g.Details); diff != "" {
				t.Errorf("%s: details (-replied +recorded):\n%s", where, diff)
			}
		}
	default:
		t.Errorf("%s: %s asks for a reply schema AgentV 4.42 does not use", where, g.Request)
	}
}

func (c *agentv442Checker) codeGrader(where string, g agentv442Grader) {
	t := c.t
	c.use(where, g.Grader)
	c.graders++
	b, err := os.ReadFile(filepath.Join(c.dir, g.Grader))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var run struct {
		Cwd     string   `json:"cwd"`
		Command []string `json:"command"`
		Stdin   any      `json:"stdin"`
	}
	if err := decodeStrict(b, &run); err != nil {
		t.Fatalf("%s: %s: %v", where, g.Grader, err)
	}
	if !strings.HasPrefix(run.Cwd, replies.BundlePlaceholder+"/") || len(run.Command) == 0 || run.Stdin == nil {
		t.Errorf("%s: %s: cwd %q, command %q: want a command run in the bundle, with its stdin", where, g.Grader, run.Cwd, run.Command)
	}
}

func (c *agentv442Checker) use(where, name string) {
	if !strings.HasPrefix(name, "requests/") && !strings.HasPrefix(name, "graders/") {
		c.t.Errorf("%s: %q is neither requests/NNNN.json nor graders/NNNN.json", where, name)
	}
	c.used[name]++
}

// allUsedOnce checks that every recorded request and code grader run is some result's, once.
func (c *agentv442Checker) allUsedOnce() {
	for _, sub := range []string{"requests", "graders"} {
		files, _ := filepath.Glob(filepath.Join(c.dir, sub, "*.json"))
		for _, f := range files {
			name := sub + "/" + filepath.Base(f)
			if c.used[name] != 1 {
				c.t.Errorf("%s is named by %d results, want 1", name, c.used[name])
			}
			delete(c.used, name)
		}
	}
	for name := range c.used {
		c.t.Errorf("%s is named by a result but was not recorded", name)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
