package grade42

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A test of an AgentV 4.42 suite (evalfile.Case.Suite set) is judged as AgentV 4.42.4 judges a test of a CLI target
// run in batch mode (provider_batching): its graders (registry/builtin-graders.ts), their prompts and reply schemas
// (graders/llm-grader.ts), and its rules of verdicts and scores (orchestrator.ts runEvaluatorList): a grader's
// verdict at 0.8 whatever the test's threshold (a deterministic grader's at 1), negate, required with or without
// min_score, the weighted mean of the graders that judged, the test's threshold (the test's, else the suite's,
// else the run's). docs/judging.md lists where it deliberately differs, each for a reason of the operator's:
//   - a grader that could not judge for the operator's own reasons (the model could not be asked, a code grader
//     that could not run or replied nothing usable) is an Error and so is its test, as for agentv-eval-v2 (AgentV
//     4.42 scores such a grader 0 and fails it, or skips it);
//   - a grader whose replies stay unreadable after AgentV's one repair request is skipped as AgentV skips it (left
//     out of the test's score), but the test is then an Error, not judged by its other graders alone: an answer
//     that makes the judge reply nonsense must not leave the cheap graders to pass it (as with the LLM budget).

// AgentV 4.42's verdicts of one grader (EvaluationVerdict).
const (
	pass42 = "pass"
	fail42 = "fail"
	skip42 = "skip"
)

// graderPassScore is AgentV 4.42's DEFAULT_THRESHOLD: an LLM, code, tool-trajectory, field-accuracy,
// execution-metrics or composite grader passes at it, whatever the test's threshold.
const graderPassScore = 0.8

// verdictOf42 is AgentV 4.42's scoreToVerdict with its default threshold.
func verdictOf42(score float64) string {
	if score >= graderPassScore {
		return pass42
	}
	return fail42
}

// RunnerTargetName names the runner where AgentV 4.42 names its CLI target (a code grader's trace metadata); the
// judge model is evaluate.JudgeTargetName (a grader's graderTarget). The operator has no targets file: these are
// its names for them.
const RunnerTargetName = "runner"

// implicitGraderName names the llm-grader AgentV 4.42 judges a test without assertions with.
const implicitGraderName = "llm-grader"

// implicitGrader is the llm-grader of a test without assertions (AgentV: its default llm-grader).
var implicitGrader = &evalfile.EvaluatorConfig{Name: implicitGraderName, Key: implicitGraderName,
	Type: evalfile.TypeLLMJudge, Grader: "llm-grader", LLMJudge: &evalfile.LLMJudgeConfig{}}

// assertion42 is one of AgentV 4.42's assertions: what a grader checked, whether it passed, and why.
type assertion42 struct {
	Text     string  `json:"text"`
	Passed   bool    `json:"passed"`
	Evidence *string `json:"evidence,omitempty"`
}

// tokens42 is the token usage AgentV 4.42 keeps of a grader's model call ({input, output}).
type tokens42 struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// grade42 is one grader's result in AgentV 4.42's terms (its EvaluationScore), and what the operator adds: why a
// grader could not judge.
type grade42 struct {
	score      float64
	verdict    string
	assertions []assertion42
	// aspects is expectedAspectCount.
	aspects int
	// request is graderRawRequest (nil: none), target graderTarget ("" none).
	request orderedObject
	target  string
	// details is the grader's details object (nil: none).
	details json.RawMessage
	tokens  *tokens42
	// members are a composite's members (its scores), in order.
	members []member42

	// errMsg, when set, says why the grader could not judge: an Error.
	errMsg string
	// skipCause and skipWhy, when set, say why the grader was skipped by the operator (no model, not run here, the
	// budget, unreadable replies).
	skipCause verdict.SkipCause
	skipWhy   string
	// usage is the model usage of every call the grader made.
	usage verdict.Usage
}

// member42 is a composite's member: its name, AgentV grader type and weight in the composite's scores (nil: none
// shown), and its result.
type member42 struct {
	name, kind string
	weight     *float64
	key        string
	g          grade42
}

// errored42 is a grader that could not judge.
func errored42(msg string) grade42 {
	return grade42{verdict: fail42, errMsg: msg, aspects: 1}
}

// skipped42 is a grader the operator did not judge here.
func skipped42(cause verdict.SkipCause, why string) grade42 {
	return grade42{verdict: skip42, skipCause: cause, skipWhy: why, aspects: 1}
}

// Graders are AgentV 4.42's graders: the evaluate.Grader42 that a Judge judges 4.42 tests with (Judge.Grader42).
// The zero value is ready; it holds nothing, and every call reads the Judge it is given.
type Graders struct{}

var _ evaluate.Grader42 = Graders{}

// caseRun42 judges the graders of one 4.42 test.
type caseRun42 struct {
	judge    *evaluate.Judge
	ctx      context.Context
	c        *evalfile.Case
	resp     *jsonlresult.Response
	recorded map[string]verdict.EvaluatorResult
	out      output42
	// inputs are the test's prompt inputs, built once by the first grader that needs them.
	inputs      *inputs42
	inputsErr   error
	inputsBuilt bool
}

// JudgeCase judges a 4.42 test as j (Judge.JudgeCase of a case with a Suite).
func (Graders) JudgeCase(ctx context.Context, j *evaluate.Judge, c *evalfile.Case, resp *jsonlresult.Response,
	codeResults map[string]verdict.EvaluatorResult) verdict.CaseResult {
	res := verdict.CaseResult{ID: c.ID}
	evs := c.Evaluators
	if len(evs) == 0 {
		if j.LLM == nil {
			res.Verdict = verdict.VerdictSkipped
			res.Reason = "the test has no assertions, so AgentV 4.42 judges it with its llm-grader, which " + evaluate.NoModelReason
			return res
		}
		evs = []*evalfile.EvaluatorConfig{implicitGrader}
	}
	run := &caseRun42{judge: j, ctx: ctx, c: c, resp: resp, recorded: codeResults, out: outputOf42(resp)}
	grades := make([]grade42, len(evs))
	for i, ev := range evs {
		g := run.grade(ev)
		if ev.Negate {
			g = negate42(g)
		}
		grades[i] = g
	}
	res.Evaluators = make([]verdict.EvaluatorResult, len(evs))
	for i, ev := range evs {
		res.Evaluators[i] = result42(ev.Name, ev.Grader, ev.Key, ev.EffectiveWeight(), grades[i])
	}
	res.Score, res.Verdict, res.Error, res.Reason = combine42(evs, grades, threshold42(c, j.Threshold))
	evaluate.SumEvaluators(&res)
	return res
}

// JudgeMissing judges a test of a 4.42 suite whose record a batch output lacks as j, as AgentV 4.42's batch CLI
// provider does: with the answer "Error: Batch output missing id 'ID'". The result stays Missing; a test that would
// pass on that answer is an Error (a test without a record never passes).
func (g Graders) JudgeMissing(ctx context.Context, j *evaluate.Judge, c *evalfile.Case) verdict.CaseResult {
	resp := &jsonlresult.Response{ID: c.ID, Text: "Error: Batch output missing id '" + c.ID + "'"}
	res := g.JudgeCase(ctx, j, c, resp, nil)
	res.Missing = true
	if res.Verdict == verdict.VerdictPass {
		res.Verdict, res.Error = verdict.VerdictError, verdict.MissingReason+" (AgentV 4.42 grades the answer \""+
			resp.Text+"\", which passed its graders; a test without a record never passes here)"
	}
	return res
}

// threshold42 is a test's pass threshold: its execution.threshold, else its suite's, else the run's.
func threshold42(c *evalfile.Case, run float64) float64 {
	switch {
	case c.Threshold != nil:
		return *c.Threshold
	case c.Suite != nil && c.Suite.Threshold != nil:
		return *c.Suite.Threshold
	}
	return run
}

// combine42 is a test's score and verdict from its graders' (AgentV 4.42's runEvaluatorList): the weighted mean of
// the graders that judged (weight 0 counts nothing; none: 0), or 0 when a required grader scored below its
// min_score (else the test's threshold); Pass when the score reaches the threshold. A grader that could not judge
// makes the test an Error, and so does one skipped for the budget or for unreadable replies; a test whose graders
// were all skipped here (no model, code graders not run) is Skipped.
func combine42(evs []*evalfile.EvaluatorConfig, grades []grade42, threshold float64) (float64, verdict.Verdict, string, string) {
	for i, g := range grades {
		if g.errMsg != "" {
			return 0, verdict.VerdictError, textbound.Head(fmt.Sprintf("grader %q could not judge the test: %s", evs[i].Name,
				g.errMsg), verdict.MaxReasoningLength), ""
		}
	}
	for i, g := range grades {
		if c := firstSkip42(g); c != nil && (c.skipCause == verdict.SkipBudgetSpent || c.skipCause == verdict.SkipUnreadableReply) {
			return 0, verdict.VerdictError, textbound.Head(fmt.Sprintf("grader %q was not judged, so the test is not "+
				"judged: %s", evs[i].Name, c.skipWhy), verdict.MaxReasoningLength), ""
		}
	}
	var sum, weights float64
	judged := 0
	requiredFailed := false
	var skips []string
	for i, g := range grades {
		if g.verdict == skip42 {
			skips = append(skips, evs[i].Name+": "+g.skipWhy)
			continue
		}
		judged++
		w := evs[i].EffectiveWeight()
		sum += g.score * w
		weights += w
		if evs[i].Required {
			min := threshold
			if evs[i].MinScore != nil {
				min = *evs[i].MinScore
			}
			requiredFailed = requiredFailed || g.score < min
		}
	}
	if judged == 0 {
		return 0, verdict.VerdictSkipped, "", textbound.Head("no grader could judge the test: "+strings.Join(skips, "; "),
			verdict.MaxReasoningLength)
	}
	score := 0.0
	if weights > 0 && !requiredFailed {
		score = sum / weights
	}
	if score >= threshold {
		return score, verdict.VerdictPass, "", ""
	}
	return score, verdict.VerdictFail, "", ""
}

// firstSkip42 returns g, or the first of its members (at any depth), skipped by the operator; nil when none is.
func firstSkip42(g grade42) *grade42 {
	if g.verdict == skip42 && g.skipCause != "" {
		return &g
	}
	for _, m := range g.members {
		if s := firstSkip42(m.g); s != nil {
			return s
		}
	}
	return nil
}

// negate42 is AgentV 4.42's negateScore: 1 - score, pass and fail swapped (skip stays), each assertion flipped and
// its evidence prefixed "[Negated] ".
func negate42(g grade42) grade42 {
	if g.errMsg != "" {
		return g
	}
	g.score = verdict.ClampScore(1 - g.score)
	switch g.verdict {
	case pass42:
		g.verdict = fail42
	case fail42:
		g.verdict = pass42
	}
	flipped := make([]assertion42, len(g.assertions))
	for i, a := range g.assertions {
		a.Passed = !a.Passed
		if a.Evidence != nil && *a.Evidence != "" {
			e := "[Negated] " + *a.Evidence
			a.Evidence = &e
		} else {
			a.Evidence = nil
		}
		flipped[i] = a
	}
	g.assertions = flipped
	return g
}

// result42 is a grader's result in the operator's vocabulary: its passed assertions as hits and the others as
// misses (each "text: evidence"), its details as the reasoning, its members.
func result42(name, kind, key string, weight float64, g grade42) verdict.EvaluatorResult {
	r := verdict.EvaluatorResult{Name: name, Type: kind, Key: key, Weight: weight, Score: verdict.ClampScore(g.score)}
	switch {
	case g.errMsg != "":
		r.Verdict, r.Score = verdict.VerdictError, 0
		r.Misses, r.Reasoning = []string{g.errMsg}, g.errMsg
	case g.verdict == skip42:
		r.Verdict, r.Score, r.SkipCause, r.Reasoning = verdict.VerdictSkipped, 0, g.skipCause, g.skipWhy
		if r.SkipCause == "" {
			r.SkipCause = verdict.SkipUnreadableReply
		}
	case g.verdict == pass42:
		r.Verdict = verdict.VerdictPass
	default:
		r.Verdict = verdict.VerdictFail
	}
	for _, a := range g.assertions {
		note := a.Text
		if a.Evidence != nil && *a.Evidence != "" {
			note += ": " + *a.Evidence
		}
		if a.Passed {
			r.Hits = append(r.Hits, note)
		} else {
			r.Misses = append(r.Misses, note)
		}
	}
	if r.Reasoning == "" && len(g.details) > 0 {
		r.Reasoning = "details: " + string(g.details)
	}
	r.Hits, r.Misses = evaluate.Bounded(r.Hits), evaluate.Bounded(r.Misses)
	r.Reasoning = textbound.Head(r.Reasoning, verdict.MaxReasoningLength)
	if g.usage != (verdict.Usage{}) {
		u := g.usage
		r.Usage = &u
	}
	for _, m := range g.members {
		w := 1.0
		if m.weight != nil {
			w = *m.weight
		}
		r.Members = append(r.Members, result42(m.name, m.kind, m.key, w, m.g))
	}
	return r
}

// grade judges one grader of the test (a composite's members included).
func (r *caseRun42) grade(ev *evalfile.EvaluatorConfig) grade42 {
	switch ev.Type {
	case evalfile.TypeLLMJudge, evalfile.TypeRubric:
		return r.llmGrader(ev)
	case evalfile.TypeCodeJudge:
		return r.codeGrader(ev)
	case evalfile.TypeComposite:
		return r.composite(ev)
	case evalfile.TypeToolTrajectory:
		return trajectory42(ev.ToolTrajectory, r.out)
	case evalfile.TypeFieldAccuracy:
		return r.fieldAccuracy(ev)
	case evalfile.TypeLatency:
		return latency42(ev.Latency, r.resp)
	case evalfile.TypeCost:
		return cost42(ev.Cost, r.resp)
	case evalfile.TypeTokenUsage:
		return tokenUsage42(ev.TokenUsage, r.resp)
	case evalfile.TypeExecutionMetrics:
		return executionMetrics42(ev.ExecutionMetrics, r.out, r.resp)
	case evalfile.TypeSkillTrigger:
		return skillTrigger42(ev.SkillTrigger, r.out)
	}
	if ev.Assertion != nil {
		return assertion42Grade(ev.Type, ev.Assertion, r.out.candidate)
	}
	return errored42(fmt.Sprintf("unknown grader type %q", ev.Grader))
}

// fieldAccuracy is the field-accuracy grader: the agentv-eval-v2 comparison over the 4.42 answer, AgentV 4.42's
// verdict at 0.8.
func (r *caseRun42) fieldAccuracy(ev *evalfile.EvaluatorConfig) grade42 {
	resp := *r.resp
	resp.Text = r.out.candidate
	o := evaluate.FieldAccuracy(ev.FieldAccuracy, r.c, &resp)
	g := grade42{score: o.Score, aspects: max(len(ev.FieldAccuracy.Fields), 1)}
	for _, h := range o.Hits {
		g.assertions = append(g.assertions, assertion42{Text: h, Passed: true})
	}
	for _, m := range o.Misses {
		g.assertions = append(g.assertions, assertion42{Text: m, Passed: false})
	}
	g.verdict = verdictOf42(g.score)
	if o.Verdict == verdict.VerdictFail {
		g.verdict = fail42
	}
	return g
}

// promptInputs builds the test's prompt inputs once.
func (r *caseRun42) promptInputs() (*inputs42, error) {
	if !r.inputsBuilt {
		r.inputs, r.inputsErr = buildInputs42(r.judge.Bundle, r.c, r.judge.InputFiles == evaluate.InputFilesEmbed)
		r.inputsBuilt = true
	}
	return r.inputs, r.inputsErr
}
