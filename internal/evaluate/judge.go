package evaluate

import (
	"context"
	"fmt"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// CodeJudgeRunner runs code_judge scripts. ScriptRunner is the implementation that executes them; in the pod the
// judge runner (internal/judgerunner) runs them in the judge containers and hands the results to the collector as
// recorded results, and `collector check --run-code-judges` runs them locally.
//
// Results a runner returns leave verdict.Verdict empty unless the judge failed (verdict.VerdictError) or a code_judge aggregator
// set it; the Judge applies the threshold.
type CodeJudgeRunner interface {
	// Run judges one case with one code_judge evaluator.
	Run(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, resp *jsonlresult.Response) verdict.EvaluatorResult
	// Aggregate runs the code_judge aggregator of composite ev over its members' final results.
	Aggregate(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, members []verdict.EvaluatorResult) verdict.EvaluatorResult
}

// CodeGrader42Runner is a CodeJudgeRunner that also runs the code graders of AgentV 4.42 suites (ScriptRunner and
// the pod's judge runner are); a runner that is not one leaves them an Error.
type CodeGrader42Runner interface {
	// Grade42 runs an AgentV 4.42 code grader of a 4.42 test (ev's command, or composite ev's code-grader
	// aggregator) on in, which the 4.42 graders built.
	Grade42(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, in CodeGraderInput) verdict.EvaluatorResult
}

// CodeGraderInput is one run of an AgentV 4.42 code grader, built by the 4.42 graders (internal/evaluate/grade42)
// from the test and its bundle's files, run by a CodeGrader42Runner: what the command reads on stdin, the answer
// when it is too large for stdin, and how the command's reply is read.
type CodeGraderInput interface {
	// LargeOutput is the answer, as JSON, when it must be written to a file whose path Stdin is given; nil when the
	// answer is in the payload.
	LargeOutput() []byte
	// Stdin is what the grader reads on stdin; outputPath is the file holding LargeOutput ("" when there is none).
	Stdin(outputPath string) []byte
	// Reply reads the grader's reply from its stdout, the end of its stderr and its exit code; an error says why
	// the reply is no result (the runner adds how long the grader ran and its stderr).
	Reply(stdout, stderr []byte, exitCode int) (verdict.EvaluatorResult, error)
}

// RunCodeGrader42 runs a 4.42 code grader with runner, when it can: a runner that is no CodeGrader42Runner leaves
// it an Error.
func RunCodeGrader42(ctx context.Context, runner CodeJudgeRunner, c *evalfile.Case, ev *evalfile.EvaluatorConfig,
	in CodeGraderInput) verdict.EvaluatorResult {
	g, ok := runner.(CodeGrader42Runner)
	if !ok {
		return JudgeFailure("this code judge runner does not run AgentV 4.42 code graders", "")
	}
	return g.Grade42(ctx, c, ev, in)
}

// Grader42 judges the tests of AgentV 4.42 suites (a case whose Suite is set) with a Judge's settings: its
// threshold, model, code judge runner, bundle and answer delimiters. internal/evaluate/grade42's Graders is the
// one implementation; the binaries that judge give it to every Judge they make (Judge.Grader42).
type Grader42 interface {
	// JudgeCase judges 4.42 test c as j: resp is its answer (never nil), codeResults its code graders' recorded
	// results by evaluator key (nil: none).
	JudgeCase(ctx context.Context, j *Judge, c *evalfile.Case, resp *jsonlresult.Response,
		codeResults map[string]verdict.EvaluatorResult) verdict.CaseResult
	// JudgeMissing judges 4.42 test c, whose record the runner's output lacks, as j (see Judge.JudgeMissing).
	JudgeMissing(ctx context.Context, j *Judge, c *evalfile.Case) verdict.CaseResult
}

// noGrader42 is why a Judge made without the 4.42 graders leaves a 4.42 test an Error.
const noGrader42 = "this judge cannot judge a test of an AgentV 4.42 suite: it was made without the AgentV 4.42 " +
	"graders (Judge.Grader42, internal/evaluate/grade42)"

// Judge judges cases with a pass threshold. It is safe for concurrent use when CodeJudges is.
type Judge struct {
	// Threshold is the pass threshold in [0, 1] (see verdict.DefaultThreshold and verdict.ParseThreshold).
	Threshold float64
	// CodeJudges runs code_judge scripts; nil when scripts do not run here (their results are recorded
	// elsewhere and passed to JudgeCase).
	CodeJudges CodeJudgeRunner
	// MissingCodeJudge is the verdict of a code_judge that neither ran here nor has a recorded result:
	// verdict.VerdictSkipped (the default, for `collector check` without --run-code-judges) or verdict.VerdictError (in the pod,
	// where the launcher should have recorded every result).
	MissingCodeJudge verdict.Verdict
	// LLM is the model endpoint of llm_judge and rubric evaluators and llm_judge aggregators; nil leaves them
	// Skipped (with how to enable them) and cases without evaluators Skipped. When set, a case without evaluators
	// is judged by llm_judge with AgentV's default prompt (DefaultLLMJudgeName).
	LLM Model
	// AnswerNonceKey, when set, wraps the runner's texts in every LLM judge's prompt between nonce markers keyed by
	// it (spec.judging.llm.answerDelimiters: Nonce; see AnswerNonceKey); nil sends them as AgentV does.
	AnswerNonceKey []byte
	// Bundle is the eval bundle the judges read files from: prompt files, input files, reference files
	// (bundle.Dir; the zero value is no bundle, and every file reference is then an Error naming it).
	Bundle bundle.Dir
	// InputFiles is how the prompts show a case's input files (spec.judging.inputFiles); "" is the eval file
	// format's own.
	InputFiles InputFiles
	// Grader42 judges the tests of AgentV 4.42 suites (grade42.Graders); nil leaves each such test an Error that
	// says this Judge was made without it.
	Grader42 Grader42
}

// InputFiles is how the judges' prompts show a case's input files (spec.judging.inputFiles), spelt as the API
// spells it.
type InputFiles string

const (
	// InputFilesFormat is the eval file format's own: Embed for agentv-eval-v2 (what its runs judged before the
	// setting), Reference for AgentV 4.42 suites.
	InputFilesFormat InputFiles = ""
	// InputFilesReference shows each input file as a reference to it (AgentV's "agent" formatting, for a CLI
	// target): the path as written in agentv-eval-v2 (AgentV v2.0.1), the absolute bundle path in a 4.42 suite.
	InputFilesReference InputFiles = "Reference"
	// InputFilesEmbed shows each input file's text (AgentV's "lm" formatting, for a language-model target).
	InputFilesEmbed InputFiles = "Embed"
)

// NeedsCase reports whether judging a case with evs reads anything of the case but its id and evaluators (see
// ReadsCase); a case without evaluators is judged by llm_judge when j.LLM is set, which reads the case.
func (j *Judge) NeedsCase(evs []*evalfile.EvaluatorConfig) bool {
	return evalfile.ReadsCase(evs) || (len(evs) == 0 && j.LLM != nil)
}

// JudgeCase judges one case. resp is the case's response (nil: the case is an error). codeResults holds
// recorded code_judge results by evaluator key (see RunCodeJudges); it may be nil.
func (j *Judge) JudgeCase(ctx context.Context, c *evalfile.Case, resp *jsonlresult.Response,
	codeResults map[string]verdict.EvaluatorResult) verdict.CaseResult {
	if resp == nil {
		return verdict.ErrorCase(c.ID, "the case has no output to judge")
	}
	if c.Suite != nil {
		if j.Grader42 == nil {
			return verdict.ErrorCase(c.ID, noGrader42)
		}
		return j.Grader42.JudgeCase(ctx, j, c, resp, codeResults)
	}
	res := verdict.CaseResult{ID: c.ID}
	evs := c.Evaluators
	if len(evs) == 0 {
		if j.LLM == nil {
			res.Verdict = verdict.VerdictSkipped
			res.Reason = "the case has no evaluators: add execution.evaluators to the case or the file, or judging.evaluators " +
				"to the EvalRun, or set spec.judging.llm to judge it with llm_judge as AgentV does"
			return res
		}
		evs = []*evalfile.EvaluatorConfig{defaultLLMJudge}
	}
	run := &caseRun{judge: j, ctx: ctx, c: c, resp: resp, recorded: codeResults}
	res.Evaluators = make([]verdict.EvaluatorResult, 0, len(evs))
	for _, ev := range evs {
		res.Evaluators = append(res.Evaluators, run.evaluate(ev))
	}
	res.Score, res.Verdict, res.Error, res.Reason = j.combine(res.Evaluators)
	SumEvaluators(&res)
	return res
}

// JudgeMissing judges a case whose record the runner's output lacks: a test of a 4.42 suite as AgentV 4.42's batch
// CLI provider judges it (Grader42.JudgeMissing; the result stays Missing and never passes); any other case is an
// Error (verdict.MissingCase).
func (j *Judge) JudgeMissing(ctx context.Context, c *evalfile.Case) verdict.CaseResult {
	switch {
	case c.Suite == nil:
		return verdict.MissingCase(c.ID)
	case j.Grader42 == nil:
		res := verdict.ErrorCase(c.ID, noGrader42)
		res.Missing = true
		return res
	}
	return j.Grader42.JudgeMissing(ctx, j, c)
}

// SumEvaluators sets what a case's result sums up of its evaluators' results (their members' included): the model
// usage, and whether the LLM judging budget left the case unjudged.
func SumEvaluators(res *verdict.CaseResult) {
	res.ModelUsage = usageOf(sumUsage(res.Evaluators))
	res.BudgetUnjudged = budgetSkipped(res.Evaluators) != nil
}

// RunCodeJudges runs every code_judge of the case (composite members and code_judge aggregators included) with
// j.CodeJudges and returns their results by evaluator key, as JudgeCase takes them. The judge runner
// (internal/judgerunner) uses it to record results for the collector. It returns nil when j.CodeJudges is nil.
func (j *Judge) RunCodeJudges(ctx context.Context, c *evalfile.Case, resp *jsonlresult.Response) map[string]verdict.EvaluatorResult {
	if j.CodeJudges == nil || resp == nil {
		return nil
	}
	rec := &recordingRunner{inner: j.CodeJudges, results: map[string]verdict.EvaluatorResult{}}
	jj := *j
	jj.CodeJudges = rec
	jj.JudgeCase(ctx, c, resp, nil)
	if len(rec.results) == 0 {
		return nil
	}
	return rec.results
}

// recordingRunner records what the runner it wraps returns.
type recordingRunner struct {
	inner   CodeJudgeRunner
	results map[string]verdict.EvaluatorResult
}

func (r *recordingRunner) Run(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, resp *jsonlresult.Response) verdict.EvaluatorResult {
	res := r.inner.Run(ctx, c, ev, resp)
	r.results[ev.Key] = res
	return res
}

func (r *recordingRunner) Aggregate(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig,
	members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	res := r.inner.Aggregate(ctx, c, ev, members)
	r.results[ev.Key] = res
	return res
}

var _ CodeGrader42Runner = (*recordingRunner)(nil)

func (r *recordingRunner) Grade42(ctx context.Context, c *evalfile.Case, ev *evalfile.EvaluatorConfig, in CodeGraderInput) verdict.EvaluatorResult {
	res := RunCodeGrader42(ctx, r.inner, c, ev, in)
	r.results[ev.Key] = res
	return res
}

// combine computes a case's score and verdict from its evaluator results: the weighted mean of the evaluators
// that judged it (skipped ones and weight 0 are left out); error if any evaluator errored, or if any evaluator
// (or member of one) was skipped because the LLM judging budget was spent; skipped if none judged it.
//
// The budget rule differs from AgentV on purpose: leaving a budget-skipped evaluator out of the mean lets a
// runner that spends the budget on early cases (huge answers, replies made to be asked again) have its later
// cases judged by their cheap evaluators alone, and pass. A case the budget left unjudged is therefore an Error
// (never Pass, never counted as passed by the success policy) and is counted (verdict.Summary.BudgetUnjudged).
func (j *Judge) combine(results []verdict.EvaluatorResult) (score float64, v verdict.Verdict, errMsg, reason string) {
	var sum, weights float64
	judged := 0
	for _, r := range results {
		if r.Verdict == verdict.VerdictSkipped {
			continue
		}
		judged++
		if r.Weight <= 0 {
			continue
		}
		sum += r.Score * r.Weight
		weights += r.Weight
	}
	if weights > 0 {
		score = verdict.ClampScore(sum / weights)
	}
	for _, r := range results {
		if r.Verdict == verdict.VerdictError {
			return score, verdict.VerdictError, fmt.Sprintf("evaluator %q failed: %s", r.Name, FirstNote(r)), ""
		}
	}
	if s := budgetSkipped(results); s != nil {
		msg := fmt.Sprintf("evaluator %q was not judged, so the case is not judged: %s", s.Name, s.Reasoning)
		return score, verdict.VerdictError, textbound.Head(msg, verdict.MaxReasoningLength), ""
	}
	switch {
	case judged == 0:
		return 0, verdict.VerdictSkipped, "", "no evaluator could judge the case: " + skipReasons(results)
	case weights == 0:
		return 0, verdict.VerdictSkipped, "", "every evaluator that judged the case has weight 0"
	}
	return score, j.verdict(score), "", ""
}

// budgetSkipped returns the first result, among results and their members, that was Skipped because the LLM
// judging budget was spent; nil when none was.
func budgetSkipped(results []verdict.EvaluatorResult) *verdict.EvaluatorResult {
	for i := range results {
		r := &results[i]
		if r.Verdict == verdict.VerdictSkipped && r.SkipCause == verdict.SkipBudgetSpent {
			return r
		}
		if s := budgetSkipped(r.Members); s != nil {
			return s
		}
	}
	return nil
}

// skipCauseOf is the cause of skipping what results judge together (a case, a composite): verdict.SkipBudgetSpent when
// any result or member was skipped for the budget, else the first skipped result's cause, else verdict.SkipZeroWeight
// (every result that judged has weight 0).
func skipCauseOf(results []verdict.EvaluatorResult) verdict.SkipCause {
	if budgetSkipped(results) != nil {
		return verdict.SkipBudgetSpent
	}
	for _, r := range results {
		if r.Verdict == verdict.VerdictSkipped && r.SkipCause != "" {
			return r.SkipCause
		}
	}
	return verdict.SkipZeroWeight
}

func (j *Judge) verdict(score float64) verdict.Verdict {
	if score >= j.Threshold-scoreEpsilon {
		return verdict.VerdictPass
	}
	return verdict.VerdictFail
}

// FirstNote is what a result says first: its first miss, else its reasoning.
func FirstNote(r verdict.EvaluatorResult) string {
	if len(r.Misses) > 0 {
		return r.Misses[0]
	}
	return r.Reasoning
}

func skipReasons(results []verdict.EvaluatorResult) string {
	seen := map[string]bool{}
	out := ""
	for _, r := range results {
		if seen[r.Reasoning] {
			continue
		}
		seen[r.Reasoning] = true
		if out != "" {
			out += "; "
		}
		out += r.Name + ": " + r.Reasoning
	}
	return textbound.Head(out, verdict.MaxReasoningLength)
}

// caseRun judges the evaluators of one case.
type caseRun struct {
	judge    *Judge
	ctx      context.Context
	c        *evalfile.Case
	resp     *jsonlresult.Response
	recorded map[string]verdict.EvaluatorResult
	// inputs are the judges' inputs, built once (inputsBuilt) by the first LLM judge that needs them.
	inputs      judgeInputs
	inputsErr   error
	inputsBuilt bool
	// requests are the model requests of the LLM-judged evaluators, by evaluator key (an llm_judge
	// aggregator shows them as AgentV's evaluatorRawRequest).
	requests map[string]llm.Request
}

// outcome is what a deterministic evaluator found.
type outcome struct {
	// fail forces a Fail verdict whatever the score (a rule stricter than the reference tool's score).
	fail      bool
	score     float64
	hits      []string
	misses    []string
	reasoning string
}

// evaluate judges one evaluator and returns its final result.
func (r *caseRun) evaluate(ev *evalfile.EvaluatorConfig) verdict.EvaluatorResult {
	var res verdict.EvaluatorResult
	switch ev.Type {
	case evalfile.TypeToolTrajectory:
		res = deterministic(toolTrajectory(ev.ToolTrajectory, r.resp))
	case evalfile.TypeFieldAccuracy:
		res = deterministic(fieldAccuracy(ev.FieldAccuracy, r.c, r.resp))
	case evalfile.TypeLatency:
		res = deterministic(latency(ev.Latency, r.resp))
	case evalfile.TypeCost:
		res = deterministic(cost(ev.Cost, r.resp))
	case evalfile.TypeTokenUsage:
		res = deterministic(tokenUsage(ev.TokenUsage, r.resp))
	case evalfile.TypeLLMJudge, evalfile.TypeRubric:
		res = r.llmJudge(ev)
	case evalfile.TypeCodeJudge:
		res = r.codeJudge(ev)
	case evalfile.TypeComposite:
		res = r.composite(ev)
	default:
		res = verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{fmt.Sprintf("unknown evaluator type %q", ev.Type)}}
	}
	return r.finish(ev, res)
}

// finish sets the evaluator's identity, bounds the notes and applies the threshold when the verdict is open.
func (r *caseRun) finish(ev *evalfile.EvaluatorConfig, res verdict.EvaluatorResult) verdict.EvaluatorResult {
	res.Name, res.Type, res.Key, res.Weight = ev.Name, string(ev.Type), ev.Key, ev.EffectiveWeight()
	res.Score = verdict.ClampScore(res.Score)
	res.Hits, res.Misses = Bounded(res.Hits), Bounded(res.Misses)
	res.Reasoning = textbound.Head(res.Reasoning, verdict.MaxReasoningLength)
	switch res.Verdict {
	case verdict.VerdictError, verdict.VerdictSkipped:
		res.Score = 0
		if res.Verdict == verdict.VerdictSkipped && res.SkipCause == "" {
			res.SkipCause = skipCauseOf(res.Members)
		}
	case verdict.VerdictPass, verdict.VerdictFail:
	default:
		res.Verdict = r.judge.verdict(res.Score)
	}
	return res
}

// deterministic is a deterministic evaluator's result: Fail when o says so, else its verdict left to the threshold.
func deterministic(o outcome) verdict.EvaluatorResult {
	res := verdict.EvaluatorResult{Score: o.score, Hits: o.hits, Misses: o.misses, Reasoning: o.reasoning}
	if o.fail {
		res.Verdict = verdict.VerdictFail
	}
	return res
}

func skipped(cause verdict.SkipCause, reason string) verdict.EvaluatorResult {
	return verdict.EvaluatorResult{Verdict: verdict.VerdictSkipped, SkipCause: cause, Reasoning: reason}
}

func (r *caseRun) codeJudge(ev *evalfile.EvaluatorConfig) verdict.EvaluatorResult {
	if rec, ok := r.recorded[ev.Key]; ok {
		return rec
	}
	if r.judge.CodeJudges != nil {
		return r.judge.CodeJudges.Run(r.ctx, r.c, ev, r.resp)
	}
	return r.missingCodeJudge("code_judge")
}

func (r *caseRun) missingCodeJudge(what string) verdict.EvaluatorResult {
	if r.judge.MissingCodeJudge == verdict.VerdictError {
		msg := fmt.Sprintf("no %s result was recorded for this case (the judge did not run or its result was lost)", what)
		return verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{msg}, Reasoning: msg}
	}
	return skipped(verdict.SkipNotRunHere, fmt.Sprintf("%s scripts do not run here (collector check runs them with --run-code-judges)", what))
}

func (r *caseRun) composite(ev *evalfile.EvaluatorConfig) verdict.EvaluatorResult {
	cfg := ev.Composite
	members := make([]verdict.EvaluatorResult, 0, len(cfg.Members))
	for _, m := range cfg.Members {
		mr := r.evaluate(m)
		if w, ok := cfg.Weights[m.Name]; ok {
			mr.Weight = w
		}
		members = append(members, mr)
	}
	var res verdict.EvaluatorResult
	switch cfg.Aggregator {
	case evalfile.AggregatorCodeJudge:
		switch rec, ok := r.recorded[ev.Key]; {
		case ok:
			res = rec
		case r.judge.CodeJudges != nil:
			res = r.judge.CodeJudges.Aggregate(r.ctx, r.c, ev, members)
		default:
			res = r.missingCodeJudge("code_judge aggregator")
		}
		res.Hits = append(prefixedNotes(members, true), res.Hits...)
		res.Misses = append(prefixedNotes(members, false), res.Misses...)
	case evalfile.AggregatorLLMJudge:
		res = r.llmAggregate(ev, members)
	default:
		res = weightedAverage(members)
	}
	res.Members = members
	return res
}

// weightedAverage combines member results: skipped members are left out, weight 0 excludes; an errored member
// makes the composite an error.
func weightedAverage(members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	res := verdict.EvaluatorResult{Hits: prefixedNotes(members, true), Misses: prefixedNotes(members, false)}
	var sum, weights float64
	judged := 0
	for _, m := range members {
		if m.Verdict == verdict.VerdictSkipped {
			continue
		}
		judged++
		sum += m.Score * m.Weight
		weights += m.Weight
	}
	for _, m := range members {
		if m.Verdict == verdict.VerdictError {
			res.Verdict = verdict.VerdictError
			res.Reasoning = fmt.Sprintf("member %q failed", m.Name)
			return res
		}
	}
	switch {
	case judged == 0:
		res.Verdict, res.SkipCause = verdict.VerdictSkipped, skipCauseOf(members)
		res.Reasoning = "every member was skipped: " + skipReasons(members)
	case weights == 0:
		res.Verdict, res.SkipCause = verdict.VerdictSkipped, verdict.SkipZeroWeight
		res.Reasoning = "every judged member has weight 0"
	default:
		res.Score = sum / weights
		res.Reasoning = fmt.Sprintf("weighted average of %d members", judged)
	}
	return res
}

// prefixedNotes returns the members' hits (or misses), each prefixed with "[member] ".
func prefixedNotes(members []verdict.EvaluatorResult, hits bool) []string {
	var out []string
	for _, m := range members {
		notes := m.Misses
		if hits {
			notes = m.Hits
		}
		for _, n := range notes {
			out = append(out, "["+m.Name+"] "+n)
		}
	}
	return out
}

// sumUsage adds up the model usage of results and their members.
func sumUsage(results []verdict.EvaluatorResult) verdict.Usage {
	var u verdict.Usage
	for _, r := range results {
		if r.Usage != nil {
			u.Add(*r.Usage)
		}
		u.Add(sumUsage(r.Members))
	}
	return u
}
