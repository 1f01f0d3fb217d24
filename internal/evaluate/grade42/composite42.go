package grade42

import (
	"errors"
	"fmt"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// AgentV 4.42.4's composite grader (graders/composite.ts): its members judged in order (AgentV runs them in
// parallel and keeps their order), then its aggregator: weighted_average (weights by member name, default 1),
// threshold (the share of members that pass), code-grader (a command reading {results: {member:
// EvaluationScore}}) or llm-grader (one model call with the members' results). A member's negate and required are
// not applied inside a composite, as in AgentV.

// defaultAggregatorPrompt42 is AgentV 4.42's DEFAULT_COMPOSITE_AGGREGATOR_PROMPT.
const defaultAggregatorPrompt42 = `Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all grader results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail), and reasoning.`

// composite judges a composite grader.
func (r *caseRun42) composite(ev *evalfile.EvaluatorConfig) grade42 {
	cfg := ev.Composite
	if cfg == nil {
		return errored42("the composite has no members")
	}
	members := make([]member42, len(cfg.Members))
	for i, m := range cfg.Members {
		members[i] = member42{name: m.Name, kind: m.Grader, key: m.Key, g: r.grade(m)}
	}
	for _, m := range members {
		if m.g.errMsg != "" {
			g := errored42(fmt.Sprintf("member %q could not judge: %s", m.name, m.g.errMsg))
			g.members = members
			return g
		}
	}
	var g grade42
	switch cfg.Aggregator {
	case evalfile.AggregatorThreshold:
		g = threshold42Grade(members, cfg.Threshold)
	case evalfile.AggregatorCodeJudge:
		g = r.codeAggregator(ev, members)
	case evalfile.AggregatorLLMJudge:
		g = r.llmAggregator(ev, members)
	default:
		g = weightedAverage42(members, cfg.Weights)
	}
	if g.members == nil {
		g.members = members
	}
	return g
}

// memberWeight is a member's weight by the aggregator's weights (default 1).
func memberWeight(weights map[string]float64, name string) *float64 {
	w := 1.0
	if v, ok := weights[name]; ok {
		w = v
	}
	return &w
}

// prefixed are the members' assertions of the members that judged, each prefixed "[member] ".
func prefixed(members []member42) []assertion42 {
	out := []assertion42{}
	for _, m := range members {
		if m.g.verdict == skip42 {
			continue
		}
		for _, a := range m.g.assertions {
			a.Text = "[" + m.name + "] " + a.Text
			out = append(out, a)
		}
	}
	return out
}

// allSkipped is the composite of members that were all skipped: skipped, for the first member's cause.
func allSkipped(members []member42, request orderedObject) (grade42, bool) {
	for _, m := range members {
		if m.g.verdict != skip42 {
			return grade42{}, false
		}
	}
	if len(members) == 0 {
		return grade42{}, false
	}
	s := firstSkip42(members[0].g)
	g := skipped42(verdict.SkipNotRunHere, "every member was skipped")
	if s != nil {
		g.skipCause, g.skipWhy = s.skipCause, "every member was skipped: "+s.skipWhy
	}
	g.assertions = []assertion42{{Text: "All evaluators skipped (infrastructure failure)"}}
	g.request = request
	return g, true
}

// weightedAverage42 is AgentV 4.42's runWeightedAverage.
func weightedAverage42(members []member42, weights map[string]float64) grade42 {
	request := orderedObject{{"aggregator", "weighted_average"}}
	if len(weights) > 0 {
		w := orderedObject{}
		for _, m := range members {
			if v, ok := weights[m.name]; ok {
				w = w.set(m.name, v)
			}
		}
		for name, v := range weights {
			w = w.set(name, v)
		}
		request = append(request, kv{"weights", w})
	}
	for i := range members {
		members[i].weight = memberWeight(weights, members[i].name)
	}
	if g, ok := allSkipped(members, request); ok {
		return g
	}
	var sum, total float64
	for _, m := range members {
		if m.g.verdict == skip42 {
			continue
		}
		total += *m.weight
		sum += m.g.score * *m.weight
	}
	score := 0.0
	if total > 0 {
		score = sum / total
	}
	g := grade42{score: verdict.ClampScore(score), verdict: verdictOf42(score), assertions: prefixed(members), request: request}
	g.aspects = max(len(g.assertions), 1)
	return g
}

// threshold42Grade is AgentV 4.42's runThreshold: the share of the members that judged that passed, passing at
// threshold.
func threshold42Grade(members []member42, threshold float64) grade42 {
	request := orderedObject{{"aggregator", "threshold"}, {"threshold", threshold}}
	if g, ok := allSkipped(members, request); ok {
		return g
	}
	passing, judged := 0, 0
	for _, m := range members {
		if m.g.verdict == skip42 {
			continue
		}
		judged++
		if m.g.verdict == pass42 {
			passing++
		}
	}
	score := 0.0
	if judged > 0 {
		score = float64(passing) / float64(judged)
	}
	pass := score >= threshold
	head := assertion42{Text: fmt.Sprintf("%d/%d evaluators passed (threshold: %s)", passing, judged, jsString(threshold)), Passed: pass}
	g := grade42{score: verdict.ClampScore(score), assertions: append([]assertion42{head}, prefixed(members)...), request: request}
	g.verdict = fail42
	if pass {
		g.verdict = pass42
	}
	g.aspects = len(g.assertions)
	return g
}

// scoreObject42 is a grader's result as AgentV 4.42's EvaluationScore, what aggregators read.
func scoreObject42(g grade42) orderedObject {
	obj := orderedObject{{"score", g.score}, {"verdict", g.verdict}, {"assertions", assertionsValue(g.assertions)},
		{"expectedAspectCount", float64(max(g.aspects, 1))}}
	if g.request != nil {
		obj = append(obj, kv{"graderRawRequest", g.request})
	}
	if g.target != "" {
		obj = append(obj, kv{"graderTarget", g.target})
	}
	if len(g.members) > 0 {
		obj = append(obj, kv{"scores", childScores42(g.members)})
	}
	if len(g.details) > 0 {
		if v, err := parseOrdered(g.details); err == nil {
			obj = append(obj, kv{"details", v})
		}
	}
	if g.tokens != nil {
		obj = append(obj, kv{keyTokenUsage, orderedObject{{keyInput, float64(g.tokens.Input)}, {keyOutput, float64(g.tokens.Output)}}})
	}
	return obj
}

// childScores42 are a composite's members as AgentV 4.42's ChildGraderResult list.
func childScores42(members []member42) []any {
	out := make([]any, len(members))
	for i, m := range members {
		c := orderedObject{{keyName, m.name}, {keyType, m.kind}, {"score", m.g.score}}
		if m.weight != nil {
			c = append(c, kv{"weight", *m.weight})
		}
		c = append(c, kv{"verdict", m.g.verdict}, kv{"assertions", assertionsValue(m.g.assertions)})
		if m.g.request != nil {
			c = append(c, kv{"graderRawRequest", m.g.request})
		}
		if len(m.g.members) > 0 {
			c = append(c, kv{"scores", childScores42(m.g.members)})
		}
		if len(m.g.details) > 0 {
			if v, err := parseOrdered(m.g.details); err == nil {
				c = append(c, kv{"details", v})
			}
		}
		if m.g.tokens != nil {
			c = append(c, kv{keyTokenUsage, orderedObject{{keyInput, float64(m.g.tokens.Input)}, {keyOutput, float64(m.g.tokens.Output)}}})
		}
		out[i] = c
	}
	return out
}

// assertionsValue is a list of assertions as values ({text, passed, evidence?}).
func assertionsValue(as []assertion42) []any {
	out := make([]any, len(as))
	for i, a := range as {
		o := orderedObject{{kindText, a.Text}, {"passed", a.Passed}}
		if a.Evidence != nil {
			o = append(o, kv{"evidence", *a.Evidence})
		}
		out[i] = o
	}
	return out
}

// resultsObject42 is {member: EvaluationScore}, the members' results as the aggregators read them.
func resultsObject42(members []member42) orderedObject {
	obj := make(orderedObject, 0, len(members))
	for _, m := range members {
		obj = obj.set(m.name, scoreObject42(m.g))
	}
	return obj
}

// notAggregated is the composite whose aggregator does not run because a member was skipped by the operator: its
// result would be made of results that are not there.
func notAggregated(members []member42) (grade42, bool) {
	for _, m := range members {
		if s := firstSkip42(m.g); s != nil {
			g := skipped42(s.skipCause, fmt.Sprintf("member %q was skipped, so the aggregator did not run: %s", m.name, s.skipWhy))
			g.members = members
			return g, true
		}
	}
	return grade42{}, false
}

// codeAggregator runs the composite's code-grader aggregator (AgentV 4.42's runCodeAggregator).
func (r *caseRun42) codeAggregator(ev *evalfile.EvaluatorConfig, members []member42) grade42 {
	cfg := ev.Composite
	for i := range members {
		members[i].weight = memberWeight(nil, members[i].name)
	}
	script := ""
	if cfg.Script != nil {
		script = cfg.Script.Script
	}
	request := orderedObject{{"aggregator", "code-grader"}, {"script", script}}
	var g grade42
	switch rec, ok := r.recorded[ev.Key]; {
	case ok:
		g = fromResult42(rec, true)
	default:
		if s, ok := notAggregated(members); ok {
			return s
		}
		if r.judge.CodeJudges == nil {
			g = r.missingCode("code-grader aggregator")
			break
		}
		in := &graderInput{payload: orderedObject{{"results", resultsObject42(members)}}, aggregator: true}
		g = fromResult42(evaluate.RunCodeGrader42(r.ctx, r.judge.CodeJudges, r.c, ev, in), true)
	}
	g.request = request
	return g
}

// llmAggregator asks the model for the composite's result (AgentV 4.42's runLlmAggregator): one call, its prompt the
// aggregator's (a file:// prompt read from the bundle; AgentV sends its path) with {{EVALUATOR_RESULTS_JSON}}
// replaced by the members' results, else AgentV's default; a reply that does not parse fails the composite with
// score 0, as in AgentV.
func (r *caseRun42) llmAggregator(ev *evalfile.EvaluatorConfig, members []member42) grade42 {
	if s, ok := notAggregated(members); ok {
		return s
	}
	if r.judge.LLM == nil {
		g := skipped42(verdict.SkipNoModel, "the llm-grader aggregator "+evaluate.NoModelReason)
		g.members = members
		return g
	}
	cfg := ev.Composite
	prompt := cfg.Prompt
	if cfg.PromptFile != "" {
		text, _, err := evaluate.ReadBundleFile(r.judge.Bundle, cfg.PromptFile)
		if err != nil {
			return errored42(fmt.Sprintf("the aggregator's prompt file %q: %v", textbound.Head(cfg.PromptFile, 200), err))
		}
		prompt = text
	}
	if prompt == "" {
		prompt = defaultAggregatorPrompt42
	}
	user := strings.ReplaceAll(prompt, "{{EVALUATOR_RESULTS_JSON}}", evaluate.Stringify(resultsObject42(members)))
	request := orderedObject{{"aggregator", "llm-grader"}, {"userPrompt", user}, {"systemPrompt", outputSchema42},
		{"target", evaluate.JudgeTargetName}}
	reply, err := r.judge.LLM.Complete(r.ctx, llm.Request{System: strings.TrimSpace(outputSchema42), User: strings.TrimSpace(user)})
	var g grade42
	switch {
	case errors.Is(err, llm.ErrBudgetSpent):
		g = skipped42(verdict.SkipBudgetSpent, err.Error())
	case err != nil:
		g = errored42("the model could not be asked: " + err.Error())
	default:
		parsed, perr := parseFreeform42(reply.Content)
		if perr != nil {
			g = grade42{verdict: fail42, assertions: []assertion42{{Text: "LLM aggregator failed"}}, aspects: 1}
		} else {
			g = parsed
		}
	}
	g.usage = reply.Usage
	g.request = request
	return g
}
