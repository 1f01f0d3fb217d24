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
		missing = append(missing, fmt.Sprintf("bun %s at %s (hack/agentv442-oracle.sh fetches it)", version, real["bun"]))
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
	// The judge requests, as multisets.
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

	// The code grader runs, as multisets.
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
		name := key + " graders/" + filepath.Base(p)
		best := ""
		for i, r := range runs {
			if used[i] || !slices.Equal(r.Command, want.Command) {
				continue
			}
			d := cmp.Diff(want, r)
			if d == "" {
				used[i] = true
				f.runs++
				best = ""
				break
			}
			if best == "" {
				best = d
			}
		}
		switch {
		case best != "":
			differ[name] = "the code grader's run differs (-AgentV +collector check):\n" + best
		case !slices.ContainsFunc(runs, func(r agentv442Run) bool { return slices.Equal(r.Command, want.Command) }):
			differ[name] = "collector check ran no such code grader"
			if got.refused != "" {
				differ[name] = got.refused
			}
		}
	}

	// The graders and the tests.
	ours := map[string]int{}
	for i, c := range got.doc.Cases {
		ours[c.ID] = i
	}
	for _, r := range readAgentV442Results(t, dir) {
		tkey := key + " " + r.TestID
		f.recordedTests++
		i, ok := ours[r.TestID]
		if !ok {
			differ[tkey] = "collector check has no such case"
			if got.refused != "" {
				differ[tkey] = got.refused
			}
			for _, g := range r.Scores {
				f.recordedGraders += 1 + len(g.Scores)
				differ[tkey+" "+g.Name] = differ[tkey]
				for _, m := range g.Scores {
					differ[tkey+" "+g.Name+"/"+m.Name] = differ[tkey]
				}
			}
			if len(r.Scores) == 0 {
				f.recordedGraders++
				differ[tkey+" llm-grader"] = differ[tkey]
			}
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
		want := r.Scores
		if len(want) == 0 {
			want = []agentv442Grader{{Name: "llm-grader", Type: "llm-grader", Score: r.Score, Verdict: agentv442VerdictOf(r.Score)}}
		}
		compareAgentV442Graders(tkey, " ", want, c.Evaluators, &f, differ)
	}
	return f
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
	"assert-extended/dataset.eval contains-all-fields contains-all-2":                           notYetAssertions,
	"assert-extended/dataset.eval contains-any-greeting":                                        notYetTest,
	"assert-extended/dataset.eval contains-any-greeting contains-any-5":                         notYetAssertions,
	"assert-extended/dataset.eval ends-with-sign-off":                                           notYetTest,
	"assert-extended/dataset.eval ends-with-sign-off ends-with-Best regards":                    notYetAssertions,
	"assert-extended/dataset.eval icontains-all-required-fields":                                notYetTest,
	"assert-extended/dataset.eval icontains-all-required-fields icontains-all-3":                notYetAssertions,
	"assert-extended/dataset.eval icontains-any-missing-input":                                  notYetTest,
	"assert-extended/dataset.eval icontains-any-missing-input icontains-any-6":                  notYetAssertions,
	"assert-extended/dataset.eval icontains-keyword":                                            notYetTest,
	"assert-extended/dataset.eval icontains-keyword icontains-error":                            notYetAssertions,
	"assert-extended/dataset.eval negate-contains-any contains-any-3":                           notYetAssertions,
	"assert-extended/dataset.eval regex-case-insensitive":                                       notYetTest,
	"assert-extended/dataset.eval regex-case-insensitive regex-[a-z]+@[a-z]+\\.[a-z]+":          notYetAssertions,
	"assert-extended/dataset.eval required-inputs-recipe":                                       notYetTest,
	"assert-extended/dataset.eval required-inputs-recipe asks-for-rule-codes":                   notYetAssertions,
	"assert-extended/dataset.eval required-inputs-recipe mentions-expected-format":              notYetAssertions,
	"assert-extended/dataset.eval starts-with-greeting":                                         notYetTest,
	"assert-extended/dataset.eval starts-with-greeting starts-with-Dear":                        notYetAssertions,
	"assert/dataset.eval contains-check":                                                        notYetTest,
	"assert/dataset.eval contains-check contains-Hello":                                         notYetAssertions,
	"assert/dataset.eval contains-check regex-[Hh]ello":                                         notYetAssertions,
	"assert/dataset.eval equals-check":                                                          notYetTest,
	"assert/dataset.eval equals-check equals-4":                                                 notYetAssertions,
	"assert/dataset.eval json-response":                                                         notYetTest,
	"assert/dataset.eval json-response contains-\"ok\"":                                         notYetAssertions,
	"assert/dataset.eval json-response contains-\"status\"":                                     notYetAssertions,
	"assert/dataset.eval json-response is-json":                                                 notYetAssertions,
	"assert/dataset.eval regex-check regex-Good (morning|afternoon|evenin":                      notYetAssertions,
	"autoresearch/EVAL degraded-search contains-\"P1\"":                                         notYetAssertions,
	"autoresearch/EVAL degraded-search is-json":                                                 notYetAssertions,
	"autoresearch/EVAL degraded-search rubrics":                                                 notYetRubrics,
	"autoresearch/EVAL memory-leak-gradual":                                                     notYetTest,
	"autoresearch/EVAL memory-leak-gradual contains-\"P2\"":                                     notYetAssertions,
	"autoresearch/EVAL memory-leak-gradual is-json":                                             notYetAssertions,
	"autoresearch/EVAL memory-leak-gradual rubrics":                                             notYetRubrics,
	"autoresearch/EVAL payment-failures":                                                        notYetTest,
	"autoresearch/EVAL payment-failures contains-\"P1\"":                                        notYetAssertions,
	"autoresearch/EVAL payment-failures is-json":                                                notYetAssertions,
	"autoresearch/EVAL requests not AgentV's":                                                   notYetPrompts,
	"autoresearch/EVAL requests/0001.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0002.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0003.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0004.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0005.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0006.json":                                                      notYetPrompts,
	"autoresearch/EVAL requests/0007.json":                                                      notYetPrompts,
	"autoresearch/EVAL slow-dashboard contains-\"P2\"":                                          notYetAssertions,
	"autoresearch/EVAL slow-dashboard is-json":                                                  notYetAssertions,
	"autoresearch/EVAL ssl-cert-expiry":                                                         notYetTest,
	"autoresearch/EVAL ssl-cert-expiry contains-\"P1\"":                                         notYetAssertions,
	"autoresearch/EVAL ssl-cert-expiry is-json":                                                 notYetAssertions,
	"autoresearch/EVAL total-outage":                                                            notYetTest,
	"autoresearch/EVAL total-outage contains-\"P0\"":                                            notYetAssertions,
	"autoresearch/EVAL total-outage is-json":                                                    notYetAssertions,
	"autoresearch/EVAL typo-in-footer":                                                          notYetTest,
	"autoresearch/EVAL typo-in-footer contains-\"P3\"":                                          notYetAssertions,
	"autoresearch/EVAL typo-in-footer is-json":                                                  notYetAssertions,
	"autoresearch/EVAL typo-in-footer rubrics":                                                  notYetRubrics,
	"basic/dataset.eval code-gen-python-comprehensive":                                          notYetTest,
	"basic/dataset.eval code-gen-python-comprehensive code_correctness":                         notYetLLMGrader,
	"basic/dataset.eval code-gen-python-comprehensive keyword_check":                            notYetCodeGrader,
	"basic/dataset.eval code-review-javascript llm-grader":                                      notYetLLMGrader,
	"basic/dataset.eval coding-multiturn-debug-session":                                         notYetTest,
	"basic/dataset.eval coding-multiturn-debug-session llm-grader":                              notYetLLMGrader,
	"basic/dataset.eval feature-proposal-brainstorm":                                            notYetTest,
	"basic/dataset.eval feature-proposal-brainstorm llm-grader":                                 notYetLLMGrader,
	"basic/dataset.eval graders/0001.json":                                                      notYetCodeStdin,
	"basic/dataset.eval requests not AgentV's":                                                  notYetPrompts,
	"basic/dataset.eval requests/0001.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0002.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0003.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0004.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0005.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0006.json":                                                     notYetPrompts,
	"basic/dataset.eval requests/0007.json":                                                     notYetPrompts,
	"basic/dataset.eval shorthand-array-syntax":                                                 notYetTest,
	"basic/dataset.eval shorthand-array-syntax llm-grader":                                      notYetLLMGrader,
	"basic/dataset.eval shorthand-string-example llm-grader":                                    notYetLLMGrader,
	"basic/dataset.eval shorthand-structured-output":                                            notYetTest,
	"basic/dataset.eval shorthand-structured-output llm-grader":                                 notYetLLMGrader,
	"benchmark-tooling/benchmark.eval code-generation":                                          notYetTest,
	"benchmark-tooling/benchmark.eval code-generation llm-grader":                               notYetLLMGrader,
	"benchmark-tooling/benchmark.eval greeting llm-grader":                                      notYetLLMGrader,
	"benchmark-tooling/benchmark.eval requests not AgentV's":                                    notYetPrompts,
	"benchmark-tooling/benchmark.eval requests/0001.json":                                       notYetPrompts,
	"benchmark-tooling/benchmark.eval requests/0002.json":                                       notYetPrompts,
	"benchmark-tooling/benchmark.eval requests/0003.json":                                       notYetPrompts,
	"benchmark-tooling/benchmark.eval summarization llm-grader":                                 notYetLLMGrader,
	"compare/dataset.eval code-gen-001":                                                         notYetTest,
	"compare/dataset.eval code-gen-001 contains-palindrome":                                     notYetAssertions,
	"compare/dataset.eval code-gen-002":                                                         notYetTest,
	"compare/dataset.eval code-gen-002 regex-subsequence|lcs|LCS":                               notYetAssertions,
	"compare/dataset.eval code-review-001":                                                      notYetTest,
	"compare/dataset.eval code-review-001 contains-bug":                                         notYetAssertions,
	"compare/dataset.eval code-review-001 contains-fix":                                         notYetAssertions,
	"compare/dataset.eval code-review-002":                                                      notYetTest,
	"compare/dataset.eval code-review-002 contains-function":                                    notYetAssertions,
	"compare/dataset.eval code-review-002 contains-optim":                                       notYetAssertions,
	"compare/dataset.eval code-review-003":                                                      notYetTest,
	"compare/dataset.eval code-review-003 contains-error":                                       notYetAssertions,
	"compare/dataset.eval code-review-003 regex-edge.?case|missing|exception|n":                 notYetAssertions,
	"composite/dataset.eval code-grader-safety-gate safety_gate/quality":                        notYetLLMGrader,
	"composite/dataset.eval graders/0001.json":                                                  notYetCodeStdin,
	"composite/dataset.eval llm-grader-conflict-resolution":                                     notYetTest,
	"composite/dataset.eval llm-grader-conflict-resolution final_decision":                      notYetComposite,
	"composite/dataset.eval llm-grader-conflict-resolution final_decision/conciseness":          notYetLLMGrader,
	"composite/dataset.eval llm-grader-conflict-resolution final_decision/detail":               notYetLLMGrader,
	"composite/dataset.eval nested-composite":                                                   notYetTest,
	"composite/dataset.eval nested-composite comprehensive_evaluation":                          notYetComposite,
	"composite/dataset.eval nested-composite comprehensive_evaluation/content_quality":          notYetComposite,
	"composite/dataset.eval nested-composite comprehensive_evaluation/content_quality/accuracy": notYetLLMGrader,
	"composite/dataset.eval nested-composite comprehensive_evaluation/content_quality/clarity":  notYetLLMGrader,
	"composite/dataset.eval nested-composite comprehensive_evaluation/safety":                   notYetLLMGrader,
	"composite/dataset.eval requests not AgentV's":                                              notYetPrompts,
	"composite/dataset.eval requests/0001.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0002.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0003.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0004.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0005.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0006.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0007.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0008.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0009.json":                                                 notYetPrompts,
	"composite/dataset.eval requests/0010.json":                                                 notYetPrompts,
	"composite/dataset.eval weighted-average-example":                                           notYetTest,
	"composite/dataset.eval weighted-average-example release_gate":                              notYetComposite,
	"composite/dataset.eval weighted-average-example release_gate/quality":                      notYetLLMGrader,
	"composite/dataset.eval weighted-average-example release_gate/safety":                       notYetLLMGrader,
	"default-graders/dataset.eval requests not AgentV's":                                        notYetPrompts,
	"default-graders/dataset.eval requests/0001.json":                                           notYetPrompts,
	"default-graders/dataset.eval requests/0002.json":                                           notYetPrompts,
	"default-graders/dataset.eval requests/0003.json":                                           notYetPrompts,
	"default-graders/dataset.eval requests/0004.json":                                           notYetPrompts,
	"default-graders/dataset.eval skip-defaults":                                                notYetTest,
	"default-graders/dataset.eval skip-defaults urgency_check":                                  notYetLLMGrader,
	"default-graders/dataset.eval with-custom-eval":                                             notYetTest,
	"default-graders/dataset.eval with-custom-eval helpfulness":                                 notYetLLMGrader,
	"default-graders/dataset.eval with-custom-eval rubrics":                                     notYetRubrics,
	"deterministic-graders/dataset.eval contains-basic":                                         notYetTest,
	"deterministic-graders/dataset.eval contains-basic contains-Hello":                          notYetAssertions,
	"deterministic-graders/dataset.eval equals-exact":                                           notYetTest,
	"deterministic-graders/dataset.eval equals-exact equals-4":                                  notYetAssertions,
	"deterministic-graders/dataset.eval is-json-valid":                                          notYetTest,
	"deterministic-graders/dataset.eval is-json-valid is-json":                                  notYetAssertions,
	"deterministic-graders/dataset.eval multi-assertion":                                        notYetTest,
	"deterministic-graders/dataset.eval multi-assertion contains-\"result\"":                    notYetAssertions,
	"deterministic-graders/dataset.eval multi-assertion is-json":                                notYetAssertions,
	"deterministic-graders/dataset.eval regex-email":                                            notYetTest,
	"deterministic-graders/dataset.eval regex-email regex-[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-":       notYetAssertions,
	"deterministic-graders/dataset.eval required-gate":                                          notYetTest,
	"deterministic-graders/dataset.eval required-gate contains-\"message\"":                     notYetAssertions,
	"deterministic-graders/dataset.eval required-gate contains-success":                         notYetAssertions,
	"deterministic-graders/dataset.eval required-gate is-json":                                  notYetAssertions,
	"deterministic-graders/dataset.eval starts-with-prefix regex-^Dear User":                    notYetAssertions,
	"document-extraction/confusion-metrics.eval graders/0001.json":                              notYetCodeStdin,
	"document-extraction/confusion-metrics.eval graders/0002.json":                              notYetCodeStdin,
	"document-extraction/confusion-metrics.eval graders/0003.json":                              notYetCodeStdin,
	"document-extraction/confusion-metrics.eval graders/0004.json":                              notYetCodeStdin,
	"document-extraction/confusion-metrics.eval graders/0005.json":                              notYetCodeStdin,
	"document-extraction/confusion-metrics.eval metrics-001":                                    notYetTest,
	"document-extraction/confusion-metrics.eval metrics-001 header_confusion":                   notYetCodeGrader,
	"document-extraction/confusion-metrics.eval metrics-002":                                    notYetTest,
	"document-extraction/confusion-metrics.eval metrics-002 header_confusion":                   notYetCodeGrader,
	"document-extraction/confusion-metrics.eval metrics-003":                                    notYetTest,
	"document-extraction/confusion-metrics.eval metrics-003 header_confusion":                   notYetCodeGrader,
	"document-extraction/confusion-metrics.eval metrics-004":                                    notYetTest,
	"document-extraction/confusion-metrics.eval metrics-004 header_confusion":                   notYetCodeGrader,
	"document-extraction/confusion-metrics.eval metrics-005":                                    notYetTest,
	"document-extraction/confusion-metrics.eval metrics-005 header_confusion":                   notYetCodeGrader,
	"document-extraction/field-accuracy.eval graders/0001.json":                                 notYetCodeStdin,
	"document-extraction/field-accuracy.eval graders/0002.json":                                 notYetCodeStdin,
	"document-extraction/field-accuracy.eval invoice-006":                                       notYetTest,
	"document-extraction/field-accuracy.eval invoice-006 line_items_matched":                    notYetCodeGrader,
	"env-interpolation/dataset.eval full-value":                                                 envRefused,
	"env-interpolation/dataset.eval full-value llm-grader":                                      envRefused,
	"env-interpolation/dataset.eval partial-value":                                              envRefused,
	"env-interpolation/dataset.eval partial-value llm-grader":                                   envRefused,
	"env-interpolation/dataset.eval requests/0001.json":                                         envRefused,
	"env-interpolation/dataset.eval requests/0002.json":                                         envRefused,
	"evalrun-extra/graders.eval deterministic-edges":                                            notYetTest,
	"evalrun-extra/graders.eval deterministic-edges all-of-two":                                 notYetAssertions,
	"evalrun-extra/graders.eval deterministic-edges ends-trimmed":                               notYetAssertions,
	"evalrun-extra/graders.eval deterministic-edges equals-trimmed":                             notYetAssertions,
	"evalrun-extra/graders.eval deterministic-edges fenced-json":                                notYetAssertions,
	"evalrun-extra/graders.eval deterministic-edges multiline-regex":                            notYetAssertions,
	"evalrun-extra/graders.eval deterministic-edges starts-trimmed":                             notYetAssertions,
	"evalrun-extra/graders.eval negated-grader":                                                 notYetTest,
	"evalrun-extra/graders.eval negated-grader no-shouting":                                     notYetAssertions,
	"evalrun-extra/graders.eval negated-grader not-rude":                                        notYetLLMGrader,
	"evalrun-extra/graders.eval prompt-file":                                                    notYetTest,
	"evalrun-extra/graders.eval prompt-file file-template":                                      notYetLLMGrader,
	"evalrun-extra/graders.eval prompt-inline-template":                                         notYetTest,
	"evalrun-extra/graders.eval prompt-inline-template inline-template":                         notYetLLMGrader,
	"evalrun-extra/graders.eval requests not AgentV's":                                          notYetPrompts,
	"evalrun-extra/graders.eval requests/0001.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval requests/0002.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval requests/0003.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval requests/0004.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval requests/0005.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval requests/0006.json":                                             notYetPrompts,
	"evalrun-extra/graders.eval required-min-score":                                             notYetTest,
	"evalrun-extra/graders.eval required-min-score gate":                                        notYetLLMGrader,
	"evalrun-extra/graders.eval required-min-score mentions-deploy":                             notYetAssertions,
	"evalrun-extra/graders.eval required-number":                                                notYetTest,
	"evalrun-extra/graders.eval required-number gate":                                           notYetLLMGrader,
	"evalrun-extra/graders.eval required-number mentions-rollback":                              notYetAssertions,
	"evalrun-extra/graders.eval skill-missing skill-trigger-acme-deploy":                        notYetSkillTrigger,
	"evalrun-extra/graders.eval skill-not-expected":                                             notYetTest,
	"evalrun-extra/graders.eval skill-not-expected skill-trigger-acme-deploy":                   notYetSkillTrigger,
	"evalrun-extra/graders.eval skill-output":                                                   notYetTest,
	"evalrun-extra/graders.eval skill-output skill-trigger-acme-deploy":                         notYetSkillTrigger,
	"evalrun-extra/graders.eval skill-read":                                                     notYetTest,
	"evalrun-extra/graders.eval skill-read skill-trigger-acme-deploy":                           notYetSkillTrigger,
	"evalrun-extra/graders.eval skill-tool":                                                     notYetTest,
	"evalrun-extra/graders.eval skill-tool skill-trigger-acme-deploy":                           notYetSkillTrigger,
	"evalrun-extra/graders.eval skill-unexpected skill-trigger-acme-deploy":                     notYetSkillTrigger,
	"evalrun-extra/graders.eval test-threshold":                                                 notYetTest,
	"evalrun-extra/graders.eval test-threshold contains-apple":                                  notYetAssertions,
	"evalrun-extra/graders.eval test-threshold contains-pear":                                   notYetAssertions,
	"evalrun-extra/graders.eval weight-zero":                                                    notYetTest,
	"evalrun-extra/graders.eval weight-zero counted":                                            notYetAssertions,
	"evalrun-extra/graders.eval weight-zero not-counted":                                        notYetAssertions,
	"execution-metrics/dataset.eval comprehensive-thresholds":                                   notYetTest,
	"execution-metrics/dataset.eval comprehensive-thresholds full-efficiency-check":             notYetExecutionMetrics,
	"execution-metrics/dataset.eval cost-budget-check":                                          notYetTest,
	"execution-metrics/dataset.eval cost-budget-check cost-check":                               notYetExecutionMetrics,
	"execution-metrics/dataset.eval exploration-ratio-check":                                    notYetTest,
	"execution-metrics/dataset.eval exploration-ratio-check exploration-balance":                notYetExecutionMetrics,
	"execution-metrics/dataset.eval research-with-metrics":                                      notYetTest,
	"execution-metrics/dataset.eval research-with-metrics metrics-check":                        notYetExecutionMetrics,
	"execution-metrics/dataset.eval research-with-metrics trajectory-check":                     notYetOutput,
	"execution-metrics/dataset.eval simple-thresholds-pass":                                     notYetTest,
	"execution-metrics/dataset.eval simple-thresholds-pass efficiency-check":                    notYetExecutionMetrics,
	"experiments/coding-ability.eval requests not AgentV's":                                     notYetPrompts,
	"experiments/coding-ability.eval requests/0001.json":                                        notYetPrompts,
	"experiments/coding-ability.eval requests/0002.json":                                        notYetPrompts,
	"experiments/coding-ability.eval review-null-check":                                         notYetTest,
	"experiments/coding-ability.eval review-null-check mentions_undefined":                      notYetAssertions,
	"external-datasets/dataset.eval accuracy-basic-math":                                        notYetTest,
	"external-datasets/dataset.eval accuracy-basic-math llm-grader":                             notYetLLMGrader,
	"external-datasets/dataset.eval accuracy-capital":                                           notYetTest,
	"external-datasets/dataset.eval accuracy-capital llm-grader":                                notYetLLMGrader,
	"external-datasets/dataset.eval inline-test llm-grader":                                     notYetLLMGrader,
	"external-datasets/dataset.eval regression-farewell":                                        notYetTest,
	"external-datasets/dataset.eval regression-farewell llm-grader":                             notYetLLMGrader,
	"external-datasets/dataset.eval regression-greeting":                                        notYetTest,
	"external-datasets/dataset.eval regression-greeting llm-grader":                             notYetLLMGrader,
	"external-datasets/dataset.eval requests not AgentV's":                                      notYetPrompts,
	"external-datasets/dataset.eval requests/0001.json":                                         notYetPrompts,
	"external-datasets/dataset.eval requests/0002.json":                                         notYetPrompts,
	"external-datasets/dataset.eval requests/0003.json":                                         notYetPrompts,
	"external-datasets/dataset.eval requests/0004.json":                                         notYetPrompts,
	"external-datasets/dataset.eval requests/0005.json":                                         notYetPrompts,
	"input-files-shorthand/dataset.eval compare-two-files":                                      notYetTest,
	"input-files-shorthand/dataset.eval compare-two-files llm-grader":                           notYetLLMGrader,
	"input-files-shorthand/dataset.eval requests not AgentV's":                                  notYetPrompts,
	"input-files-shorthand/dataset.eval requests/0001.json":                                     notYetPrompts,
	"input-files-shorthand/dataset.eval requests/0002.json":                                     notYetPrompts,
	"input-files-shorthand/dataset.eval requests/0003.json":                                     notYetPrompts,
	"input-files-shorthand/dataset.eval summarize-sales-explicit":                               notYetTest,
	"input-files-shorthand/dataset.eval summarize-sales-explicit llm-grader":                    notYetLLMGrader,
	"input-files-shorthand/dataset.eval summarize-sales-shorthand":                              notYetTest,
	"input-files-shorthand/dataset.eval summarize-sales-shorthand llm-grader":                   notYetLLMGrader,
	"latency-assertions/dataset.eval exact-with-latency":                                        notYetTest,
	"latency-assertions/dataset.eval exact-with-latency auth-perf":                              notYetOutput,
	"latency-assertions/dataset.eval latency-fail":                                              notYetTest,
	"latency-assertions/dataset.eval latency-fail slow-read":                                    notYetOutput,
	"latency-assertions/dataset.eval latency-pass":                                              notYetTest,
	"latency-assertions/dataset.eval latency-pass fast-read":                                    notYetOutput,
	"latency-assertions/dataset.eval latency-with-args":                                         notYetTest,
	"latency-assertions/dataset.eval latency-with-args weather-perf":                            notYetOutput,
	"latency-assertions/dataset.eval mixed-latency":                                             notYetTest,
	"latency-assertions/dataset.eval mixed-latency data-pipeline-perf":                          notYetOutput,
	"local-cli/dataset.eval cli-provider-echo":                                                  notYetTest,
	"local-cli/dataset.eval cli-provider-echo llm-grader":                                       notYetLLMGrader,
	"local-cli/dataset.eval requests not AgentV's":                                              notYetPrompts,
	"local-cli/dataset.eval requests/0001.json":                                                 notYetPrompts,
	"matrix-evaluation/dataset.eval code-generation":                                            notYetTest,
	"matrix-evaluation/dataset.eval code-generation llm-grader":                                 notYetLLMGrader,
	"matrix-evaluation/dataset.eval general-greeting":                                           notYetTest,
	"matrix-evaluation/dataset.eval general-greeting llm-grader":                                notYetLLMGrader,
	"matrix-evaluation/dataset.eval github-task":                                                notYetTest,
	"matrix-evaluation/dataset.eval github-task llm-grader":                                     notYetLLMGrader,
	"matrix-evaluation/dataset.eval requests not AgentV's":                                      notYetPrompts,
	"matrix-evaluation/dataset.eval requests/0001.json":                                         notYetPrompts,
	"matrix-evaluation/dataset.eval requests/0002.json":                                         notYetPrompts,
	"matrix-evaluation/dataset.eval requests/0003.json":                                         notYetPrompts,
	"multi-turn-conversation/dataset.eval requests not AgentV's":                                notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0001.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0002.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0003.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0004.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0005.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval requests/0006.json":                                   notYetPrompts,
	"multi-turn-conversation/dataset.eval support-context-retention":                            notYetTest,
	"multi-turn-conversation/dataset.eval support-context-retention contains-#98765":            notYetAssertions,
	"multi-turn-conversation/dataset.eval support-context-retention context_retention":          notYetLLMGrader,
	"multi-turn-conversation/dataset.eval support-context-retention conversation_relevancy":     notYetLLMGrader,
	"multi-turn-conversation/dataset.eval support-context-retention role_adherence":             notYetLLMGrader,
	"multi-turn-conversation/dataset.eval support-troubleshooting-flow":                         notYetTest,
	"multi-turn-conversation/dataset.eval support-troubleshooting-flow context_retention":       notYetLLMGrader,
	"multi-turn-conversation/dataset.eval support-troubleshooting-flow conversation_relevancy":  notYetLLMGrader,
	"multi-turn-conversation/dataset.eval support-troubleshooting-flow role_adherence":          notYetLLMGrader,
	"rubric/dataset.eval code-explanation-simple":                                               notYetTest,
	"rubric/dataset.eval code-explanation-simple rubrics":                                       notYetRubrics,
	"rubric/dataset.eval code-quality-multi-eval":                                               notYetTest,
	"rubric/dataset.eval code-quality-multi-eval python_syntax":                                 notYetCodeGrader,
	"rubric/dataset.eval code-quality-multi-eval rubrics":                                       notYetRubrics,
	"rubric/dataset.eval graders/0001.json":                                                     notYetCodeStdin,
	"rubric/dataset.eval requests not AgentV's":                                                 notYetPrompts,
	"rubric/dataset.eval requests/0001.json":                                                    notYetPrompts,
	"rubric/dataset.eval requests/0002.json":                                                    notYetPrompts,
	"rubric/dataset.eval requests/0003.json":                                                    notYetPrompts,
	"rubric/dataset.eval requests/0004.json":                                                    notYetPrompts,
	"rubric/dataset.eval requests/0005.json":                                                    notYetPrompts,
	"rubric/dataset.eval summary-multi-criteria-score-ranges-proposed":                          notYetTest,
	"rubric/dataset.eval summary-multi-criteria-score-ranges-proposed rubrics":                  notYetRubrics,
	"rubric/dataset.eval summary-task":                                                          notYetTest,
	"rubric/dataset.eval summary-task llm-grader":                                               notYetLLMGrader,
	"rubric/dataset.eval technical-writing-detailed":                                            notYetTest,
	"rubric/dataset.eval technical-writing-detailed rubrics":                                    notYetRubrics,
	"rubric/operators.eval finance-summary-operator-guards":                                     notYetTest,
	"rubric/operators.eval finance-summary-operator-guards rubrics":                             notYetRubrics,
	"rubric/operators.eval requests not AgentV's":                                               notYetPrompts,
	"rubric/operators.eval requests/0001.json":                                                  notYetPrompts,
	"suite-level-input-files/dataset.eval iceland-northern-lights":                              notYetTest,
	"suite-level-input-files/dataset.eval iceland-northern-lights llm-grader":                   notYetLLMGrader,
	"suite-level-input-files/dataset.eval japan-spring":                                         notYetTest,
	"suite-level-input-files/dataset.eval japan-spring llm-grader":                              notYetLLMGrader,
	"suite-level-input-files/dataset.eval requests not AgentV's":                                notYetPrompts,
	"suite-level-input-files/dataset.eval requests/0001.json":                                   notYetPrompts,
	"suite-level-input-files/dataset.eval requests/0002.json":                                   notYetPrompts,
	"suite-level-input-files/dataset.eval requests/0003.json":                                   notYetPrompts,
	"suite-level-input-files/dataset.eval skip-suite-defaults":                                  notYetTest,
	"suite-level-input-files/dataset.eval skip-suite-defaults llm-grader":                       notYetLLMGrader,
	"suite-level-input/dataset.eval iceland-northern-lights":                                    notYetTest,
	"suite-level-input/dataset.eval iceland-northern-lights llm-grader":                         notYetLLMGrader,
	"suite-level-input/dataset.eval japan-spring":                                               notYetTest,
	"suite-level-input/dataset.eval japan-spring llm-grader":                                    notYetLLMGrader,
	"suite-level-input/dataset.eval requests not AgentV's":                                      notYetPrompts,
	"suite-level-input/dataset.eval requests/0001.json":                                         notYetPrompts,
	"suite-level-input/dataset.eval requests/0002.json":                                         notYetPrompts,
	"suite-level-input/dataset.eval requests/0003.json":                                         notYetPrompts,
	"suite-level-input/dataset.eval skip-suite-input":                                           notYetTest,
	"suite-level-input/dataset.eval skip-suite-input llm-grader":                                notYetLLMGrader,
	"test-vars-templating/dataset.eval capital-france":                                          notYetTest,
	"test-vars-templating/dataset.eval capital-france llm-grader":                               notYetLLMGrader,
	"test-vars-templating/dataset.eval greet-ada llm-grader":                                    notYetLLMGrader,
	"test-vars-templating/dataset.eval requests not AgentV's":                                   notYetPrompts,
	"test-vars-templating/dataset.eval requests/0001.json":                                      notYetPrompts,
	"test-vars-templating/dataset.eval requests/0002.json":                                      notYetPrompts,
	"threshold-grader/dataset.eval requests not AgentV's":                                       notYetPrompts,
	"threshold-grader/dataset.eval requests/0001.json":                                          notYetPrompts,
	"threshold-grader/dataset.eval requests/0002.json":                                          notYetPrompts,
	"threshold-grader/dataset.eval requests/0003.json":                                          notYetPrompts,
	"tool-trajectory-advanced/trace-file-demo.eval any-order-with-minimums":                     notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval any-order-with-minimums research-depth":      notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval combined-validation":                         notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval combined-validation research-depth":          notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval combined-validation workflow-validator":      notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval exact-sequence-validation":                   notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval exact-sequence-validation exact-workflow":    notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval in-order-validation":                         notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval in-order-validation search-then-fetch":       notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval tool-input-validation":                       notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval tool-input-validation input-validator":       notYetOutput,
	"tool-trajectory-advanced/trace-file-demo.eval tool-output-validation":                      notYetTest,
	"tool-trajectory-advanced/trace-file-demo.eval tool-output-validation output-validator":     notYetOutput,
	"tool-trajectory-simple/dataset.eval any-order-pass":                                        notYetTest,
	"tool-trajectory-simple/dataset.eval any-order-pass tool-usage-check":                       notYetOutput,
	"tool-trajectory-simple/dataset.eval exact-args-match":                                      notYetTest,
	"tool-trajectory-simple/dataset.eval exact-args-match arg-validation":                       notYetOutput,
	"tool-trajectory-simple/dataset.eval exact-auth-flow":                                       notYetTest,
	"tool-trajectory-simple/dataset.eval exact-auth-flow auth-sequence-exact":                   notYetOutput,
	"tool-trajectory-simple/dataset.eval field-list-match":                                      notYetTest,
	"tool-trajectory-simple/dataset.eval field-list-match check-source-only":                    notYetOutput,
	"tool-trajectory-simple/dataset.eval in-order-pass":                                         notYetTest,
	"tool-trajectory-simple/dataset.eval in-order-pass workflow-sequence":                       notYetOutput,
	"tool-trajectory-simple/dataset.eval metrics-check":                                         notYetTest,
	"tool-trajectory-simple/dataset.eval metrics-check metrics-tools":                           notYetOutput,
	"tool-trajectory-simple/dataset.eval mixed-args-match":                                      notYetTest,
	"tool-trajectory-simple/dataset.eval mixed-args-match mixed-precision":                      notYetOutput,
	"tool-trajectory-simple/dataset.eval partial-match":                                         notYetTest,
	"tool-trajectory-simple/dataset.eval partial-match tool-check":                              notYetOutput,
	"tool-trajectory-simple/dataset.eval skip-args-validation":                                  notYetTest,
	"tool-trajectory-simple/dataset.eval skip-args-validation workflow-sequence-only":           notYetOutput,
	"tool-trajectory-simple/dataset.eval subset-mode":                                           notYetTest,
	"tool-trajectory-simple/dataset.eval subset-mode safe-tools-only":                           notYetOutput,
	"tool-trajectory-simple/dataset.eval superset-mode":                                         notYetTest,
	"tool-trajectory-simple/dataset.eval superset-mode required-tools":                          notYetOutput,
	"trace-analysis/dataset.eval code-review-task":                                              notYetTest,
	"trace-analysis/dataset.eval code-review-task contains-suggest":                             notYetAssertions,
	"trace-analysis/dataset.eval code-review-task regex-improv|fix|refactor|optim":              notYetAssertions,
	"trace-analysis/dataset.eval research-question":                                             notYetTest,
	"trace-analysis/dataset.eval research-question contains-GraphQL":                            notYetAssertions,
	"trace-analysis/dataset.eval research-question contains-REST":                               notYetAssertions,
	"trace-analysis/dataset.eval research-question regex-type.?system|schema|typed":             notYetAssertions,
	"trace-analysis/dataset.eval simple-qa contains-Paris":                                      notYetAssertions,
	"weighted-graders/dataset.eval equal-weights-default":                                       notYetTest,
	"weighted-graders/dataset.eval equal-weights-default clarity":                               notYetLLMGrader,
	"weighted-graders/dataset.eval equal-weights-default completeness":                          notYetLLMGrader,
	"weighted-graders/dataset.eval equal-weights-default correctness":                           notYetLLMGrader,
	"weighted-graders/dataset.eval experimental-grader-disabled":                                notYetTest,
	"weighted-graders/dataset.eval experimental-grader-disabled accuracy":                       notYetLLMGrader,
	"weighted-graders/dataset.eval requests not AgentV's":                                       notYetPrompts,
	"weighted-graders/dataset.eval requests/0001.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0002.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0003.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0004.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0005.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0006.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0007.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval requests/0008.json":                                          notYetPrompts,
	"weighted-graders/dataset.eval weighted-multi-grader":                                       notYetTest,
	"weighted-graders/dataset.eval weighted-multi-grader quality-check":                         notYetLLMGrader,
	"weighted-graders/dataset.eval weighted-multi-grader safety-check":                          notYetLLMGrader,
	"weighted-graders/dataset.eval weighted-multi-grader style-check":                           notYetLLMGrader,
}

// The reasons of agentv442Differences.
const (
	notYetPrompts = "the judge requests are v2.0.1's (its template, reply schema and embedded files), not 4.42's " +
		"(DEFAULT_GRADER_TEMPLATE, {score, assertions, details}, rubric and score-range prompts, file references)"
	notYetCodeStdin = "the code grader reads v2.0.1's payload on stdin, not 4.42's (output, expected_output, " +
		"input_files, messages, trace, ...)"
	notYetTest      = "its graders are not judged as AgentV 4.42 judges them yet (its score and pass/fail follow them)"
	notYetLLMGrader = "4.42's llm-grader is judged with v2.0.1's prompt and reply schema"
	notYetRubrics   = "4.42's rubrics (string assertions, checklist and score-range rubrics) are judged with " +
		"v2.0.1's rubric prompt and verdict rules"
	notYetAssertions = "4.42's deterministic string graders (contains*, icontains*, starts-with, ends-with, " +
		"regex, is-json, equals) are not judged yet"
	notYetOutput = "a 4.42 batch record's output messages (output, with tool calls and their duration_ms) are " +
		"not read yet"
	notYetCodeGrader = "4.42's code-grader contract (its stdin, its reply {score, assertions, details}) is not " +
		"followed yet"
	notYetComposite        = "4.42's composite rules (members' verdicts at 0.8, aggregators) are not followed yet"
	notYetExecutionMetrics = "4.42's execution-metrics grader is not judged yet"
	notYetSkillTrigger     = "4.42's skill-trigger grader is not judged yet"
	envRefused             = "deliberate: the operator refuses ${{ VAR }} interpolation (it never reads its own " +
		"environment into a suite), so it refuses this suite, which AgentV ran with two variables set"
)
