package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/bundle"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Model is the endpoint LLM judges call (an *llm.Client). It must be safe for concurrent use and bound its own
// requests in flight.
type Model interface {
	Complete(ctx context.Context, req llm.Request) (llm.Reply, error)
}

// MaxReplyAttempts is how many replies an LLM judge asks for at most while the replies are not valid (AgentV's
// runWithRetry: 3). Transport failures are retried by the Model itself and end the evaluator at once.
const MaxReplyAttempts = 3

// MaxJudgedAnswerBytes bounds the candidate answer an LLM judge sends to the model: a longer answer is an Error
// verdict, never a silently shortened prompt.
const MaxJudgedAnswerBytes = 1 << 20

// DefaultLLMJudgeName names the llm_judge that judges a case without evaluators when a model endpoint is set.
const DefaultLLMJudgeName = "llm_judge"

// defaultLLMJudge is the evaluator of a case without evaluators when a model endpoint is set (AgentV judges such a
// case with llm_judge and its default prompt).
var defaultLLMJudge = &evalfile.EvaluatorConfig{Name: DefaultLLMJudgeName, Type: evalfile.TypeLLMJudge,
	Key: DefaultLLMJudgeName, LLMJudge: &evalfile.LLMJudgeConfig{}}

// NoModelReason is why LLM judges (and AgentV 4.42's LLM graders) are skipped without an endpoint.
const NoModelReason = "needs a model endpoint: set spec.judging.llm in the EvalRun (collector check: --llm-base-url " +
	"and --llm-model) to judge it; not judged"

// The prompts below are AgentV's (v2.0.1, packages/core/src/evaluation/evaluators.ts), word for word.

// defaultEvaluatorTemplate is the user prompt of llm_judge without a prompt of its own.
const defaultEvaluatorTemplate = "You are an expert evaluator. Your goal is to grade the candidate_answer based on how well it " +
	"achieves the expected_outcome for the original task.\n\n" +
	"Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may be a " +
	"simple text response, or it may contain a sequence of expected agent messages including tool calls. When it contains " +
	"multiple messages, the last message represents the final expected answer. The candidate_answer does not need to match " +
	"it verbatim, but should capture the key points and follow the same spirit.\n\n" +
	"Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.\n\n" +
	"[[ ## expected_outcome ## ]]\n{{expected_outcome}}\n\n" +
	"[[ ## question ## ]]\n{{question}}\n\n" +
	"[[ ## reference_answer ## ]]\n{{reference_answer}}\n\n" +
	"[[ ## candidate_answer ## ]]\n{{candidate_answer}}"

// freeformSystemPrompt is the system prompt of llm_judge (and of the llm_judge aggregator): the reply's schema.
const freeformSystemPrompt = `You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "hits": [<array of strings, max 4 items, brief specific achievements>],
  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],
  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"
}`

// rubricSystemPrompt is the system prompt of rubric judging.
const rubricSystemPrompt = `You are an expert evaluator. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}`

// defaultAggregatorPrompt is the user prompt of a composite's llm_judge aggregator without a prompt of its own.
const defaultAggregatorPrompt = `Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all evaluator results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail/borderline), and reasoning.`

// maxFreeformNotes is how many hits and misses of a freeform reply are kept (AgentV: slice(0, 4)).
const maxFreeformNotes = 4

// templateVariable matches {{ name }} in a prompt template.
var templateVariable = regexp.MustCompile(`\{\{\s*([a-zA-Z0-9_]+)\s*\}\}`)

// TemplateVariables are the names of the {{ name }} variables of a prompt template, in order (Substitute replaces
// them).
func TemplateVariables(template string) []string {
	matches := templateVariable.FindAllStringSubmatch(template, -1)
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m[1]
	}
	return names
}

// llmJudge judges an llm_judge or rubric evaluator: with rubrics, each rubric is checked; otherwise the model
// scores the answer with the evaluator's prompt (text, or a file of the eval bundle) or AgentV's default. Unlike
// AgentV v2.0.1, a composite's llm_judge member is judged with its own prompt too (AgentV ignores it).
func (r *caseRun) llmJudge(ev *evalfile.EvaluatorConfig) verdict.EvaluatorResult {
	if r.judge.LLM == nil {
		return skipped(verdict.SkipNoModel, string(ev.Type)+" "+NoModelReason)
	}
	cfg := ev.LLMJudge
	if cfg == nil {
		cfg = &evalfile.LLMJudgeConfig{}
	}
	if len(r.resp.Text) > MaxJudgedAnswerBytes {
		return errored(fmt.Sprintf("the candidate answer has %d bytes, more than the %d an LLM judge sends to the model",
			len(r.resp.Text), MaxJudgedAnswerBytes))
	}
	in, err := r.judgeInputs()
	if err != nil {
		return errored(err.Error())
	}
	d := r.judge.Delimiter(r.c.ID)
	values, err := templateValues(in, r.resp, d)
	if err != nil {
		return errored(err.Error())
	}
	if len(cfg.Rubrics) > 0 {
		return r.ask(ev.Key, llm.Request{System: rubricSystemPrompt, User: rubricPrompt(r.c, in, d.Wrap("candidate answer", r.resp.Text), cfg.Rubrics)},
			func(content string) (verdict.EvaluatorResult, error) { return parseRubricReply(content, cfg.Rubrics) })
	}
	template, err := r.promptTemplate(cfg.Prompt)
	if err != nil {
		return errored(err.Error())
	}
	if template == "" {
		template = defaultEvaluatorTemplate
	}
	user := Substitute(template, values)
	return r.ask(ev.Key, llm.Request{System: freeformSystemPrompt, User: user}, parseFreeformReply)
}

// judgeInputs builds the case's judge inputs once (buildJudgeInputs over the judge's bundle).
func (r *caseRun) judgeInputs() (judgeInputs, error) {
	if !r.inputsBuilt {
		r.inputs, r.inputsErr = buildJudgeInputs(r.judge.Bundle, r.c, r.judge.InputFiles == InputFilesReference)
		r.inputsBuilt = true
	}
	return r.inputs, r.inputsErr
}

// llmAggregate judges a composite with the llm_judge aggregator over its members' results. An errored member
// makes the composite an Error and a skipped one Skipped, without asking the model: what it would say about
// results that are not there cannot stand.
func (r *caseRun) llmAggregate(ev *evalfile.EvaluatorConfig, members []verdict.EvaluatorResult) verdict.EvaluatorResult {
	cfg := ev.Composite
	for _, v := range []verdict.Verdict{verdict.VerdictError, verdict.VerdictSkipped} {
		for _, m := range members {
			if m.Verdict != v {
				continue
			}
			res := verdict.EvaluatorResult{Verdict: v, Reasoning: fmt.Sprintf("member %q is %s, so the llm_judge aggregator did not judge", m.Name, v)}
			if v == verdict.VerdictSkipped {
				res.SkipCause = skipCauseOf(members)
			}
			res.Hits, res.Misses = prefixedNotes(members, true), prefixedNotes(members, false)
			return res
		}
	}
	if r.judge.LLM == nil {
		res := skipped(verdict.SkipNoModel, "the llm_judge aggregator "+NoModelReason)
		res.Hits, res.Misses = prefixedNotes(members, true), prefixedNotes(members, false)
		return res
	}
	raw, err := json.Marshal(cfg.Prompt)
	if err != nil {
		return errored(err.Error())
	}
	template, err := r.promptTemplate(raw)
	if err != nil {
		return errored(err.Error())
	}
	if template == "" {
		template = defaultAggregatorPrompt
	}
	user := strings.ReplaceAll(template, "{{EVALUATOR_RESULTS_JSON}}", r.membersJSON(ev, members))
	return r.ask(ev.Key, llm.Request{System: freeformSystemPrompt, User: user}, parseFreeformReply)
}

// ask sends req until a reply parses (at most MaxReplyAttempts replies) and returns the parsed result with the
// usage of every call. A failed call or replies that never parse are an Error verdict with the reason.
func (r *caseRun) ask(key string, req llm.Request, parse func(string) (verdict.EvaluatorResult, error)) verdict.EvaluatorResult {
	if r.requests == nil {
		r.requests = map[string]llm.Request{}
	}
	r.requests[key] = req
	var usage verdict.Usage
	var lastErr error
	for range MaxReplyAttempts {
		reply, err := r.judge.LLM.Complete(r.ctx, req)
		usage.Add(reply.Usage)
		if errors.Is(err, llm.ErrBudgetSpent) {
			// Spending stopped: what was not asked is not judged. The evaluator is Skipped with the budget as
			// its cause, and the case it belongs to is an Error (Judge.combine): never judged by the rest alone.
			res := skipped(verdict.SkipBudgetSpent, err.Error())
			res.Usage = usageOf(usage)
			return res
		}
		if err != nil {
			res := errored("the model could not be asked: " + err.Error())
			res.Usage = usageOf(usage)
			return res
		}
		if reply.FinishReason == "length" {
			lastErr = errors.New("the reply was cut at the model's token limit (finish_reason length)")
			continue
		}
		res, err := parse(reply.Content)
		if err != nil {
			lastErr = fmt.Errorf("%w; the reply: %s", err, textbound.Head(reply.Content, 200))
			continue
		}
		res.Usage = usageOf(usage)
		return res
	}
	res := errored(fmt.Sprintf("the judge's reply is not valid after %d replies: %v", MaxReplyAttempts, lastErr))
	res.Usage = usageOf(usage)
	return res
}

func usageOf(u verdict.Usage) *verdict.Usage {
	if u == (verdict.Usage{}) {
		return nil
	}
	return &u
}

func errored(msg string) verdict.EvaluatorResult {
	return verdict.EvaluatorResult{Verdict: verdict.VerdictError, Misses: []string{msg}, Reasoning: msg}
}

// promptTemplate returns the evaluator's own prompt text ("" when it has none). A prompt that is a file reference
// (bundle.IsFileRef) is that file of the eval bundle; one that does not resolve is an error naming it (AgentV
// falls back to sending the value itself as the prompt; a path is never a prompt here). A script prompt (a
// mapping) is an error: the operator does not run prompt scripts.
func (r *caseRun) promptTemplate(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New("the evaluator's prompt is a mapping (a script prompt), which this operator does not run: write the prompt's text")
	}
	if !bundle.IsFileRef(s) {
		return s, nil
	}
	text, _, err := readBundleFile(r.judge.Bundle, strings.TrimSpace(s))
	if err != nil {
		return "", fmt.Errorf("the prompt file %q: %w", textbound.Head(strings.TrimSpace(s), 200), err)
	}
	return text, nil
}

// templateValues are the variables of a prompt template (AgentV's TEMPLATE_VARIABLES), from the case's judge
// inputs and the response; the runner's texts (the answer, its output messages) wrapped by d (nil: verbatim). An
// error when the runner's texts contain d's nonce.
func templateValues(in judgeInputs, resp *jsonlresult.Response, d *Delimiter) (map[string]string, error) {
	output := indentedJSON(outputMessagesOrEmpty(resp.OutputMessages))
	if err := d.Check(resp.Text, output); err != nil {
		return nil, err
	}
	return map[string]string{
		"candidate_answer":  d.Wrap("candidate answer", strings.TrimSpace(resp.Text)),
		"reference_answer":  strings.TrimSpace(in.reference),
		"expected_outcome":  strings.TrimSpace(in.expectedOutcome),
		"question":          in.question,
		"input_messages":    in.inputSegments,
		"expected_messages": in.expectedMessages,
		"output_messages":   d.Wrap("output messages", output),
	}, nil
}

func outputMessagesOrEmpty(ms []jsonlresult.OutputMessage) []payloadOutputMessage {
	if out := outputMessages(ms); out != nil {
		return out
	}
	return []payloadOutputMessage{}
}

func indentedJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// Substitute replaces each {{ name }} of template with its value, in one pass: a value is never scanned for
// variables itself (a candidate answer that writes "{{reference_answer}}" stays that text). Unknown names stay.
func Substitute(template string, values map[string]string) string {
	return templateVariable.ReplaceAllStringFunc(template, func(m string) string {
		name := templateVariable.FindStringSubmatch(m)[1]
		if v, ok := values[name]; ok {
			return v
		}
		return m
	})
}

// rubricPrompt is AgentV's rubric prompt for case c and answer (the response's text, verbatim as AgentV sends it
// or wrapped between nonce markers).
func rubricPrompt(c *evalfile.Case, in judgeInputs, answer string, rubrics []evalfile.Rubric) string {
	parts := []string{
		"You are an expert evaluator. Evaluate the candidate answer against each rubric item below.",
		"",
		"[[ ## question ## ]]",
		in.question,
		"",
		"[[ ## expected_outcome ## ]]",
		c.ExpectedOutcome,
		"",
	}
	if ref := in.reference; strings.TrimSpace(ref) != "" {
		parts = append(parts, "[[ ## reference_answer ## ]]", ref, "")
	}
	parts = append(parts, "[[ ## candidate_answer ## ]]", answer, "", "[[ ## rubrics ## ]]")
	for _, rb := range rubrics {
		label := ""
		if rb.Required {
			label += " (REQUIRED)"
		}
		if rb.Weight != 1 {
			label += " (weight: " + strconv.FormatFloat(rb.Weight, 'f', -1, 64) + ")"
		}
		parts = append(parts, "- ["+rb.ID+"]"+label+": "+rb.Outcome)
	}
	parts = append(parts, "", "For each rubric, determine if it is satisfied and provide brief reasoning.")
	return strings.Join(parts, "\n")
}

// membersJSON is the members' results as AgentV's llm_judge aggregator shows them: an object by member name, in
// order, each the member's whole result as AgentV keeps it (score, verdict, hits, misses, expectedAspectCount,
// reasoning, evaluatorRawRequest with the member's prompts, evaluatorResults of a nested composite), indented.
func (r *caseRun) membersJSON(ev *evalfile.EvaluatorConfig, members []verdict.EvaluatorResult) string {
	obj := make(orderedObject, 0, len(members))
	for i, m := range members {
		key := ""
		if i < len(ev.Composite.Members) {
			key = ev.Composite.Members[i].Key
		}
		obj = append(obj, kv{m.Name, r.agentvResult(key, m)})
	}
	return jsJSON(obj)
}

// agentvResult is one evaluator's result in AgentV's EvaluationScore shape.
func (r *caseRun) agentvResult(key string, m verdict.EvaluatorResult) orderedObject {
	res := orderedObject{{"score", m.Score}, {"verdict", agentvVerdict(m.Verdict)}, {"hits", nonNil(m.Hits)},
		{"misses", nonNil(m.Misses)}, {"expectedAspectCount", max(len(m.Hits)+len(m.Misses), 1)}}
	if m.Reasoning != "" {
		res = append(res, kv{"reasoning", m.Reasoning})
	}
	if req, ok := r.requests[key]; ok {
		res = append(res, kv{"evaluatorRawRequest", orderedObject{{"userPrompt", req.User}, {"systemPrompt", req.System},
			{"target", JudgeTargetName}}})
	}
	if len(m.Members) > 0 {
		children := make([]any, 0, len(m.Members))
		for _, c := range m.Members {
			children = append(children, orderedObject{{"name", c.Name}, {"type", c.Type}, {"score", c.Score},
				{"verdict", agentvVerdict(c.Verdict)}, {"hits", nonNil(c.Hits)}, {"misses", nonNil(c.Misses)},
				{"reasoning", c.Reasoning}})
		}
		res = append(res, kv{"evaluatorResults", children})
	}
	return res
}

// JudgeTargetName names the judge model where AgentV names its judge target: an evaluatorRawRequest's target, an
// AgentV 4.42 grader's graderTarget. The operator has one judge endpoint and no targets file: this is its name.
const JudgeTargetName = "llm"

// JSONFromText is AgentV's parseJsonFromText: code fences removed, then the text from the first '{' to the last
// '}' (the whole text when there is none), decoded. Numbers stay json.Number.
func JSONFromText(text string) (map[string]any, error) {
	cleaned := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(text, "```json\n", ""), "```json", ""), "```", ""))
	if i, j := strings.IndexByte(cleaned, '{'), strings.LastIndexByte(cleaned, '}'); i >= 0 && j > i {
		cleaned = cleaned[i : j+1]
	}
	dec := json.NewDecoder(strings.NewReader(cleaned))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the reply is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("the reply is not valid JSON: text after the object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the reply is not a JSON object")
	}
	return obj, nil
}

// parseFreeformReply reads {score, hits?, misses?, reasoning?}: score a number in [0, 1], hits and misses lists of
// strings (blank ones dropped, at most 4 kept), reasoning a string. Anything else is an error.
func parseFreeformReply(content string) (verdict.EvaluatorResult, error) {
	obj, err := JSONFromText(content)
	if err != nil {
		return verdict.EvaluatorResult{}, err
	}
	n, ok := obj["score"].(json.Number)
	if !ok {
		return verdict.EvaluatorResult{}, fmt.Errorf("the reply's score is %s, not a number", DescribeJSON(obj["score"]))
	}
	score, err := n.Float64()
	if err != nil || score < 0 || score > 1 {
		return verdict.EvaluatorResult{}, fmt.Errorf("the reply's score %s is not in [0, 1]", n)
	}
	res := verdict.EvaluatorResult{Score: score, Verdict: ""}
	if res.Hits, err = replyStrings(obj, "hits"); err != nil {
		return verdict.EvaluatorResult{}, err
	}
	if res.Misses, err = replyStrings(obj, "misses"); err != nil {
		return verdict.EvaluatorResult{}, err
	}
	if res.Reasoning, err = optString(obj, "reasoning"); err != nil {
		return verdict.EvaluatorResult{}, err
	}
	res.Hits, res.Misses = firstN(res.Hits, maxFreeformNotes), firstN(res.Misses, maxFreeformNotes)
	return res, nil
}

// parseRubricReply reads {checks: [{id, satisfied, reasoning}], overall_reasoning} and scores it as AgentV does:
// the weights of the satisfied rubrics over the weights of all, and Fail when a required rubric is not satisfied.
// Unlike AgentV, every rubric must be checked: a reply that leaves one out is not valid (AgentV leaves its weight
// out of the score, so an omitted required rubric passes).
func parseRubricReply(content string, rubrics []evalfile.Rubric) (verdict.EvaluatorResult, error) {
	obj, err := JSONFromText(content)
	if err != nil {
		return verdict.EvaluatorResult{}, err
	}
	list, ok := obj["checks"].([]any)
	if !ok {
		return verdict.EvaluatorResult{}, fmt.Errorf("the reply's checks is %s, not a list", DescribeJSON(obj["checks"]))
	}
	overall, ok := obj["overall_reasoning"].(string)
	if !ok {
		return verdict.EvaluatorResult{}, fmt.Errorf("the reply's overall_reasoning is %s, not a string", DescribeJSON(obj["overall_reasoning"]))
	}
	type check struct {
		satisfied bool
		reasoning string
	}
	checks := map[string]check{}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return verdict.EvaluatorResult{}, fmt.Errorf("the reply's checks[%d] is %s, not an object", i, DescribeJSON(item))
		}
		id, ok1 := m["id"].(string)
		sat, ok2 := m["satisfied"].(bool)
		why, ok3 := m["reasoning"].(string)
		if !ok1 || !ok2 || !ok3 {
			return verdict.EvaluatorResult{}, fmt.Errorf("the reply's checks[%d] needs a string id, a boolean satisfied and a string reasoning", i)
		}
		if _, seen := checks[id]; !seen {
			checks[id] = check{sat, why}
		}
	}
	var res verdict.EvaluatorResult
	var total, earned float64
	var missing []string
	for _, rb := range rubrics {
		ck, ok := checks[rb.ID]
		if !ok {
			missing = append(missing, rb.ID)
			continue
		}
		total += rb.Weight
		note := "[" + rb.ID + "] " + rb.Outcome + ": " + ck.reasoning
		if ck.satisfied {
			earned += rb.Weight
			res.Hits = append(res.Hits, note)
			continue
		}
		res.Misses = append(res.Misses, note)
		if rb.Required {
			res.Verdict = verdict.VerdictFail
		}
	}
	if len(missing) > 0 {
		return verdict.EvaluatorResult{}, fmt.Errorf("the reply does not check rubric(s) %s", strings.Join(missing, ", "))
	}
	if total > 0 {
		res.Score = verdict.ClampScore(earned / total)
	}
	res.Reasoning = overall
	return res, nil
}

func replyStrings(obj map[string]any, key string) ([]string, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("the reply's %s is %s, not a list of strings", key, DescribeJSON(v))
	}
	var out []string
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("the reply's %s[%d] is %s, not a string", key, i, DescribeJSON(item))
		}
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

func optString(obj map[string]any, key string) (string, error) {
	v, ok := obj[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("the reply's %s is %s, not a string", key, DescribeJSON(v))
	}
	return s, nil
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// DescribeJSON names a decoded JSON value's kind for an error about a reply.
func DescribeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "missing or null"
	case string:
		return "the string " + strconv.Quote(textbound.Head(v, 40))
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "of another kind"
}
