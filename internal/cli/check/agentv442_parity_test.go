package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate/grade42"
	"github.com/evalrun-operator/evalrun-operator/test/judgeserver/replies"
)

// TestAgentV442Parity judges every suite of AgentV 4.42.4's parity set (testdata/agentv442/suites.txt) through
// collector check, as the recording judged it: the example's answers as the runner's batch output, the bundle the
// features directory, the code graders run (uv as the judge image's shim, bun at the judge image's pin, node), and
// every judge request answered on loopback by replies.Hashed (test/judgeserver --replies hashed: a function of the
// prompts alone, with its word-count usage). It compares with the recordings:
//   - each recorded judge request with the requests collector check sent (system and user prompts, the bundle's
//     absolute path written /BUNDLE, whitespace normalized; byte-identical ones are counted too), and every request
//     AgentV did not send;
//   - each recorded code grader run (its working directory, command and stdin) with the runs collector check made;
//   - each grader's name, score and pass/fail (composite members included; a test without graders is judged by the
//     implicit llm-grader, whose score is the test's), and each test's score and pass/fail.
//
// Whatever does not match is listed in agentv442Differences with the reason: the test fails on a difference the list
// does not name, and on a listed one that no longer occurs, so that the list only shrinks.
func TestAgentV442Parity(t *testing.T) {
	tools := agentv442Tools(t)
	root, err := filepath.Abs(filepath.Join(agentv442Dir, "features"))
	if err != nil {
		t.Fatal(err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		t.Fatal(err)
	}
	stdinDir := t.TempDir()
	t.Setenv("PATH", tools.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("ORACLE_BUNDLE", root)
	t.Setenv("ORACLE_REAL", tools.real)
	t.Setenv("ORACLE_STDIN", stdinDir)

	differ := map[string]string{}
	var all agentv442Figures
	for _, s := range readAgentV442Suites(t) {
		t.Run(s.Key(), func(t *testing.T) {
			runDir := filepath.Join(stdinDir, strings.ReplaceAll(s.Key(), "/", "-"))
			if err := os.MkdirAll(runDir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("ORACLE_STDIN", runDir)
			got := judgeAgentV442Suite(t, s, root)
			dir := filepath.Join(agentv442Dir, "recordings", s.Key())
			f := compareAgentV442Suite(t, s.Key(), dir, root, got, readAgentV442Runs(t, runDir, root), differ)
			t.Logf("%s: requests %d/%d (%d byte for byte, %d not AgentV's), code runs %d/%d, graders %d/%d, tests %d/%d",
				s.Key(), f.requests, f.recordedRequests, f.identical, f.extra, f.runs, f.recordedRuns, f.graders,
				f.recordedGraders, f.tests, f.recordedTests)
			all.add(f)
		})
	}
	t.Logf("parity with AgentV 4.42.4: judge requests %d of %d (%d byte for byte; %d requests AgentV did not send), "+
		"code grader runs %d of %d, graders %d of %d, tests %d of %d",
		all.requests, all.recordedRequests, all.identical, all.extra, all.runs, all.recordedRuns, all.graders,
		all.recordedGraders, all.tests, all.recordedTests)
	if os.Getenv("AGENTV442_DIFF") != "" {
		keys := make([]string, 0, len(differ))
		for k := range differ {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("differs: %s: %s", k, differ[k])
		}
	}
	if t.Failed() {
		return
	}
	var found []string
	for k := range differ {
		found = append(found, k)
		if _, ok := agentv442Differences[k]; !ok {
			t.Errorf("differs from AgentV 4.42.4, and agentv442Differences does not list it: %s: %s", k, differ[k])
		}
	}
	var listed []string
	for k := range agentv442Differences {
		listed = append(listed, k)
		if _, ok := differ[k]; !ok {
			t.Errorf("agentv442Differences lists %s, which now matches AgentV 4.42.4: remove it", k)
		}
	}
	sort.Strings(found)
	sort.Strings(listed)
	if diff := cmp.Diff(listed, found); diff != "" {
		t.Logf("differences (-listed +found):\n%s", diff)
	}
}

// agentv442Figures counts what matched of a suite's recordings (or of all of them).
type agentv442Figures struct {
	recordedRequests, requests, identical, extra int
	recordedRuns, runs                           int
	recordedGraders, graders                     int
	recordedTests, tests                         int
}

func (f *agentv442Figures) add(g agentv442Figures) {
	f.recordedRequests += g.recordedRequests
	f.requests += g.requests
	f.identical += g.identical
	f.extra += g.extra
	f.recordedRuns += g.recordedRuns
	f.runs += g.runs
	f.recordedGraders += g.recordedGraders
	f.graders += g.graders
	f.recordedTests += g.recordedTests
	f.tests += g.tests
}

// agentv442Tools is the code graders' PATH as the recording had it: uv, bun and node, each behind
// hack/agentv442/record-stdin, which keeps every run's stdin and command line.
type agentv442ToolDirs struct {
	// bin holds the recording shims, real the tools themselves.
	bin, real string
}

func agentv442Tools(t *testing.T) agentv442ToolDirs {
	t.Helper()
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	version := ""
	for _, line := range readLines(t, filepath.Join(repo, "hack", "judge-rootfs.sh")) {
		if v, ok := strings.CutPrefix(line, "BUN_VERSION="); ok {
			version = v
		}
	}
	real := map[string]string{
		"uv":  filepath.Join(repo, "hack", "judge-image", "uv"),
		"bun": filepath.Join(repo, "bin", "bun", version, "bun"),
	}
	var missing []string
	if node, err := exec.LookPath("node"); err == nil {
		real["node"] = node
	} else {
		missing = append(missing, "node (make nodejs installs it)")
	}
	if _, err := os.Stat(real["bun"]); version == "" || err != nil {
		missing = append(missing, fmt.Sprintf("bun %s at %s (make bun fetches it)", version, real["bun"]))
	}
	if _, err := exec.LookPath("python3"); err != nil {
		missing = append(missing, "python3")
	}
	if len(missing) > 0 {
		if os.Getenv("EVALRUN_REQUIRE_TEST_ASSETS") != "" {
			t.Fatalf("AgentV 4.42.4's code graders need %s", strings.Join(missing, ", "))
		}
		t.Skipf("AgentV 4.42.4's code graders need %s", strings.Join(missing, ", "))
	}
	dirs := agentv442ToolDirs{bin: t.TempDir(), real: t.TempDir()}
	for name, p := range real {
		if err := os.Symlink(p, filepath.Join(dirs.real, name)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(repo, "hack", "agentv442", "record-stdin"), filepath.Join(dirs.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// agentv442Judged is what collector check did with a suite: its document and the judge requests it sent.
type agentv442Judged struct {
	doc struct {
		Cases []struct {
			ID         string             `json:"id"`
			Score      *float64           `json:"score"`
			Verdict    string             `json:"verdict"`
			Reason     string             `json:"verdictReason"`
			Evaluators []agentv442OurEval `json:"evaluators"`
		} `json:"cases"`
	}
	// requests are the system and user prompts of every request, in the order they came.
	requests [][2]string
	stderr   string
	// refused is collector check's error when it refuses the suite.
	refused string
}

// agentv442OurEval is an evaluator result of collector check's document.
type agentv442OurEval struct {
	Name      string             `json:"name"`
	Type      string             `json:"type"`
	Score     float64            `json:"score"`
	Verdict   string             `json:"verdict"`
	Reasoning string             `json:"reasoning"`
	Misses    []string           `json:"misses"`
	Members   []agentv442OurEval `json:"members"`
}

// judgeAgentV442Suite runs collector check on suite s with the example's answers, its judge requests answered by
// replies.Hashed.
func judgeAgentV442Suite(t *testing.T, s agentv442Suite, root string) agentv442Judged {
	t.Helper()
	var got agentv442Judged
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		system, user := promptsOf(t, body)
		mu.Lock()
		got.requests = append(got.requests, [2]string{system, user})
		mu.Unlock()
		content := replies.Hashed(system, user, root)
		// test/judgeserver's usage: the words of the prompts and of the reply.
		prompt, completion := len(strings.Fields(system+user)), len(strings.Fields(content))
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
		})
	}))
	defer srv.Close()
	evalPath := filepath.Join(root, filepath.FromSlash(s.Path))
	answers := filepath.Join(agentv442Dir, "answers", s.Example()+".jsonl")
	var stdout, stderr bytes.Buffer
	Main(context.Background(), []string{"--mode", "batch", "--eval", evalPath, "--bundle", root, "--output", answers,
		"--llm-base-url", srv.URL + "/v1", "--llm-model", "oracle-model", "--llm-max-concurrent", "1",
		"--run-code-judges", "--format", "json"}, &stdout, &stderr)
	got.stderr = stderr.String()
	if stdout.Len() == 0 && strings.Contains(got.stderr, "invalid eval file") {
		got.refused = strings.TrimSpace(got.stderr)
		return got
	}
	if err := json.Unmarshal(stdout.Bytes(), &got.doc); err != nil {
		t.Fatalf("collector check's document: %v\nstdout: %s\nstderr: %s", err, stdout.String(), got.stderr)
	}
	return got
}

// agentv442Run is a code grader run: its working directory (the bundle written /BUNDLE), command and stdin.
type agentv442Run struct {
	Cwd     string   `json:"cwd"`
	Command []string `json:"command"`
	Stdin   any      `json:"stdin"`
}

// readAgentV442Runs reads the code grader runs record-stdin kept in dir, in the order they ran.
func readAgentV442Runs(t *testing.T, dir, root string) []agentv442Run {
	t.Helper()
	cmds, _ := filepath.Glob(filepath.Join(dir, "*.cmd"))
	sort.Strings(cmds)
	var runs []agentv442Run
	for _, c := range cmds {
		cmd, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		stdin, err := os.ReadFile(strings.TrimSuffix(c, ".cmd") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(cmd), root, replies.BundlePlaceholder), "\x00"), "\x00")
		run := agentv442Run{Cwd: args[0], Command: args[1:]}
		if err := json.Unmarshal(bytes.ReplaceAll(stdin, []byte(root), []byte(replies.BundlePlaceholder)), &run.Stdin); err != nil {
			run.Stdin = "not JSON: " + string(stdin)
		}
		runs = append(runs, run)
	}
	return runs
}

// agentv442TargetNames writes the names of the recording's targets as the operator names them: AgentV writes its
// targets' names where a code grader reads them (a grader's graderTarget, the trace's metadata.target), and those
// are the recorder's own (its targets file: "batch" the runner, "judge" the model); the operator has no targets
// file and names them grade42.RunnerTargetName and evaluate.JudgeTargetName (docs/judging.md).
func agentv442TargetNames(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch {
			case (k == "graderTarget" || k == "target") && x == "judge":
				t[k] = evaluate.JudgeTargetName
			case k == "target" && x == "batch":
				t[k] = grade42.RunnerTargetName
			default:
				t[k] = agentv442TargetNames(x)
			}
		}
	case []any:
		for i, x := range t {
			t[i] = agentv442TargetNames(x)
		}
	}
	return v
}

// normalizedPrompts is a request's prompts as compared: the bundle's path written /BUNDLE, every run of white space
// one space.
func normalizedPrompts(system, user, root string) string {
	norm := func(s string) string {
		return strings.Join(strings.Fields(strings.ReplaceAll(s, root, replies.BundlePlaceholder)), " ")
	}
	return norm(system) + "\x00" + norm(user)
}

// compareAgentV442Suite compares what collector check did with suite key with its recordings in dir, adds every
// difference to differ and returns the figures.
func compareAgentV442Suite(t *testing.T, key, dir, root string, got agentv442Judged, runs []agentv442Run,
	differ map[string]string) agentv442Figures {
	t.Helper()
	var f agentv442Figures
	compareAgentV442Requests(t, key, dir, root, got, differ, &f)
	compareAgentV442Runs(t, key, dir, got, runs, differ, &f)
	compareAgentV442Results(t, key, dir, got, differ, &f)
	return f
}

// compareAgentV442Requests compares the recorded judge requests with those collector check sent, as multisets.
func compareAgentV442Requests(t *testing.T, key, dir, root string, got agentv442Judged, differ map[string]string,
	f *agentv442Figures) {
	t.Helper()
	sent := map[string]int{}
	sentExact := map[string]int{}
	for _, r := range got.requests {
		sent[normalizedPrompts(r[0], r[1], root)]++
		sentExact[strings.ReplaceAll(r[0], root, replies.BundlePlaceholder)+"\x00"+strings.ReplaceAll(r[1], root, replies.BundlePlaceholder)]++
	}
	recorded, _ := filepath.Glob(filepath.Join(dir, "requests", "*.json"))
	sort.Strings(recorded)
	for _, p := range recorded {
		f.recordedRequests++
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		system, user := promptsOf(t, body)
		name := key + " requests/" + filepath.Base(p)
		if k := normalizedPrompts(system, user, replies.BundlePlaceholder); sent[k] > 0 {
			sent[k]--
			f.requests++
		} else {
			differ[name] = "collector check sent no such request"
			if got.refused != "" {
				differ[name] = got.refused
			}
		}
		if k := system + "\x00" + user; sentExact[k] > 0 {
			sentExact[k]--
			f.identical++
		}
	}
	for _, n := range sent {
		f.extra += n
	}
	if f.extra > 0 {
		differ[key+" requests not AgentV's"] = fmt.Sprintf("%d requests AgentV did not send", f.extra)
	}
}

// compareAgentV442Runs compares the recorded code grader runs with those collector check made, as multisets.
func compareAgentV442Runs(t *testing.T, key, dir string, got agentv442Judged, runs []agentv442Run, differ map[string]string,
	f *agentv442Figures) {
	t.Helper()
	recordedRuns, _ := filepath.Glob(filepath.Join(dir, "graders", "*.json"))
	sort.Strings(recordedRuns)
	used := make([]bool, len(runs))
	for _, p := range recordedRuns {
		f.recordedRuns++
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var want agentv442Run
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		want.Stdin = agentv442TargetNames(want.Stdin)
		name := key + " graders/" + filepath.Base(p)
		best, matched := "", false
		for i, r := range runs {
			if used[i] || !slices.Equal(r.Command, want.Command) {
				continue
			}
			if d := cmp.Diff(want, r); d == "" {
				used[i], matched = true, true
				f.runs++
				break
			} else if best == "" {
				best = d
			}
		}
		switch {
		case matched:
		case best != "":
			differ[name] = "the code grader's run differs (-AgentV +collector check):\n" + best
		case got.refused != "":
			differ[name] = got.refused
		default:
			differ[name] = "collector check ran no such code grader"
		}
	}
}

// compareAgentV442Results compares every recorded test's score and pass/fail, and its graders', with collector
// check's.
func compareAgentV442Results(t *testing.T, key, dir string, got agentv442Judged, differ map[string]string, f *agentv442Figures) {
	t.Helper()
	ours := map[string]int{}
	for i, c := range got.doc.Cases {
		ours[c.ID] = i
	}
	for _, r := range readAgentV442Results(t, dir) {
		tkey := key + " " + r.TestID
		f.recordedTests++
		want := r.Scores
		if len(want) == 0 {
			want = []agentv442Grader{{Name: "llm-grader", Type: "llm-grader", Score: r.Score, Verdict: agentv442VerdictOf(r.Score)}}
		}
		i, ok := ours[r.TestID]
		if !ok {
			why := "collector check has no such case"
			if got.refused != "" {
				why = got.refused
			}
			differ[tkey] = why
			agentv442Unjudged(tkey, " ", want, why, differ, f)
			continue
		}
		c := got.doc.Cases[i]
		score := 0.0
		if c.Score != nil {
			score = *c.Score
		}
		if near(score, r.Score) && (c.Verdict == "Pass") == r.Pass {
			f.tests++
		} else {
			differ[tkey] = fmt.Sprintf("AgentV %v pass=%v, collector check %v %s %s", r.Score, r.Pass, score, c.Verdict, c.Reason)
		}
		compareAgentV442Graders(tkey, " ", want, c.Evaluators, f, differ)
	}
}

// agentv442Unjudged records graders (and their members) collector check did not judge, for why.
func agentv442Unjudged(prefix, sep string, want []agentv442Grader, why string, differ map[string]string, f *agentv442Figures) {
	for _, g := range want {
		f.recordedGraders++
		differ[prefix+sep+g.Name] = why
		agentv442Unjudged(prefix+sep+g.Name, "/", g.Scores, why, differ, f)
	}
}

// agentv442VerdictOf is AgentV 4.42's verdict of an LLM grader's score (scoreToVerdict: pass at 0.8).
func agentv442VerdictOf(score float64) string {
	if score >= 0.8 {
		return "pass"
	}
	return "fail"
}

// compareAgentV442Graders compares AgentV's graders with ours, position by position (members too).
func compareAgentV442Graders(prefix, sep string, want []agentv442Grader, got []agentv442OurEval, f *agentv442Figures,
	differ map[string]string) {
	for i, w := range want {
		gkey := prefix + sep + w.Name
		f.recordedGraders++
		if i >= len(got) {
			differ[gkey] = "collector check has no such evaluator"
			continue
		}
		o := got[i]
		if o.Name == w.Name && near(o.Score, w.Score) && (o.Verdict == "Pass") == (w.Verdict == "pass") &&
			(o.Verdict == "Pass" || o.Verdict == "Fail") {
			f.graders++
		} else {
			why := o.Reasoning
			if len(o.Misses) > 0 {
				why = o.Misses[0]
			}
			differ[gkey] = fmt.Sprintf("AgentV %s %s %v %s, collector check %s %v %s (%s)", w.Type, w.Name, w.Score, w.Verdict,
				o.Name, o.Score, o.Verdict, why)
		}
		if len(w.Scores) > 0 {
			compareAgentV442Graders(gkey, "/", w.Scores, o.Members, f, differ)
		}
	}
}

// agentv442Differences are the entries of the parity set where collector check does not judge as AgentV 4.42.4, by
// key ("EXAMPLE/NAME requests/NNNN.json", "EXAMPLE/NAME graders/NNNN.json", "EXAMPLE/NAME TEST" for a test's score
// and pass/fail, "EXAMPLE/NAME TEST GRADER" for a grader's, "EXAMPLE/NAME TEST COMPOSITE/MEMBER" for a composite's member), each
// with the reason.
var agentv442Differences = map[string]string{
	"env-interpolation/dataset.eval full-value":               envRefused,
	"env-interpolation/dataset.eval full-value llm-grader":    envRefused,
	"env-interpolation/dataset.eval partial-value":            envRefused,
	"env-interpolation/dataset.eval partial-value llm-grader": envRefused,
	"env-interpolation/dataset.eval requests/0001.json":       envRefused,
	"env-interpolation/dataset.eval requests/0002.json":       envRefused,
}

// envRefused is the one deliberate difference of the parity set (docs/judging.md).
const envRefused = "deliberate: the operator refuses ${{ VAR }} interpolation (it never reads its own environment " +
	"into a suite), so it refuses this suite, which AgentV ran with two variables set"
