package grade42

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/llm"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// AgentV 4.42.4's llm-grader (packages/core/src/evaluation/graders/llm-grader.ts): its prompts word for word, its
// three reply schemas (freeform {score, assertions, details}; checklist rubrics {checks: [{id, satisfied,
// reasoning}]}; score-range rubrics {checks: [{id, score}]}), three replies at most and then one structure repair
// request. Prompts are trimmed before they are sent, as AgentV's provider sends them.

// defaultGraderTemplate is AgentV 4.42's DEFAULT_GRADER_TEMPLATE.
const defaultGraderTemplate = "You are an expert grader. Your goal is to grade the answer based on how well it achieves " +
	"the criteria for the original task.\n\n" +
	"Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may " +
	"be a simple text response, or it may contain a sequence of expected agent messages including tool calls. When it " +
	"contains multiple messages, the last message represents the final expected answer. The answer does not need to " +
	"match it verbatim, but should capture the key points and follow the same spirit.\n\n" +
	"Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.\n\n" +
	"[[ ## criteria ## ]]\n{{criteria}}\n\n" +
	"[[ ## question ## ]]\n{{input}}\n\n" +
	"[[ ## reference_answer ## ]]\n{{expected_output}}\n\n" +
	"[[ ## answer ## ]]\n{{output}}"

// outputSchema42 is AgentV 4.42's buildOutputSchema: the freeform grader's (and the llm-grader aggregator's)
// system prompt.
const outputSchema42 = "You must respond with a single JSON object matching this schema:\n\n{\n" +
	"  \"score\": <number between 0.0 and 1.0>,\n" +
	"  \"assertions\": [\n    {\n" +
	"      \"text\": \"<brief description of what was checked>\",\n" +
	"      \"passed\": <boolean>,\n" +
	"      \"evidence\": \"<concise evidence, 1-2 sentences, optional>\"\n" +
	"    }\n  ],\n" +
	"  \"details\": {<optional object with domain-specific structured metrics>}\n}"

// rubricSchema42 is AgentV 4.42's buildRubricOutputSchema.
const rubricSchema42 = `You are an expert grader. Evaluate the candidate answer against each rubric item.
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

// scoreRangeSchema42 is AgentV 4.42's buildScoreRangeOutputSchema.
const scoreRangeSchema42 = `You are an expert grader. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score ranges for that criterion.`

// operatorGuidance42 is AgentV 4.42's rubric operator guidance (rubric-operators.ts).
var operatorGuidance42 = map[string]string{
	"correctness": "Correctness: mark satisfied only when the answer positively supports or fulfills the outcome. " +
		"Omission or contradiction should not satisfy it.",
	"contradiction": "Contradiction guard: mark satisfied when the answer does not make a claim that contradicts the " +
		"outcome. Do not require the answer to mention the outcome; mark unsatisfied only for incompatible claims.",
}

// templateVariables42 are AgentV 4.42's TEMPLATE_VARIABLES: a custom prompt that names one of them is a whole
// template; one that names none is criteria text put into the default template.
var templateVariables42 = map[string]bool{"expected_output": true, "criteria": true, keyMetadata: true,
	"metadata_json": true, "rubrics": true, "rubrics_json": true, keyInput: true, keyOutput: true,
	"file_changes": true, keyToolCalls: true}

// maxFreeformAssertions is how many assertions of a freeform reply AgentV keeps.
const maxFreeformAssertions = 8

// maxRepairEcho bounds the invalid reply a structure repair request quotes back to the model (AgentV quotes it
// whole; a reply may carry the runner's answer, and its size must stay bounded).
const maxRepairEcho = 64 << 10

// llmGrader judges an llm-grader (rubrics included) as AgentV 4.42 does.
func (r *caseRun42) llmGrader(ev *evalfile.EvaluatorConfig) grade42 {
	if r.judge.LLM == nil {
		return skipped42(verdict.SkipNoModel, "llm-grader "+evaluate.NoModelReason)
	}
	cfg := ev.LLMJudge
	if cfg == nil {
		cfg = &evalfile.LLMJudgeConfig{}
	}
	if len(r.out.candidate) > evaluate.MaxJudgedAnswerBytes {
		return errored42(fmt.Sprintf("the answer has %d bytes, more than the %d an LLM grader sends to the model",
			len(r.out.candidate), evaluate.MaxJudgedAnswerBytes))
	}
	in, err := r.promptInputs()
	if err != nil {
		return errored42(err.Error())
	}
	criteria := r.c.ExpectedOutcome
	override, err := r.customPrompt(cfg, &criteria)
	if err != nil {
		return errored42(err.Error())
	}
	// With Nonce answer delimiters (spec.judging.llm.answerDelimiters) the answer is sent between markers keyed by
	// the run (delimiters.go); without, as AgentV sends it.
	d := r.judge.Delimiter(r.c.ID)
	if err := d.Check(r.out.candidate); err != nil {
		return errored42(err.Error())
	}
	vars := r.templateVars42(in, criteria, cfg.Rubrics)
	vars[keyOutput] = d.Wrap("answer", vars[keyOutput])
	answer := d.Wrap("answer", r.out.candidate)
	if len(cfg.Rubrics) > 0 {
		ranges := false
		for _, rb := range cfg.Rubrics {
			ranges = ranges || len(rb.ScoreRanges) > 0
		}
		user := ""
		switch {
		case override != "":
			user = evaluate.Substitute(override, vars)
		case ranges:
			user = scoreRangePrompt42(in.question, criteria, in.reference, answer, cfg.Rubrics)
		default:
			user = rubricPrompt42(in.question, criteria, in.reference, answer, cfg.Rubrics)
		}
		if ranges {
			return r.askGrader(scoreRangeSchema42, user, func(content string) (grade42, error) {
				return parseScoreRanges42(content, cfg.Rubrics)
			})
		}
		return r.askGrader(rubricSchema42, user, func(content string) (grade42, error) {
			return parseChecklist42(content, cfg.Rubrics)
		})
	}
	template := override
	if template == "" {
		template = defaultGraderTemplate
	}
	return r.askGrader(outputSchema42, evaluate.Substitute(template, vars), parseFreeform42)
}

// customPrompt resolves an llm-grader's own prompt as AgentV 4.42's llmGraderFactory does: a file:// prompt (read
// from the bundle) is a whole template; an inline prompt that names a template variable is one too; any other
// inline prompt is the criteria (criteria is set to it). It returns the template ("" for none).
func (r *caseRun42) customPrompt(cfg *evalfile.LLMJudgeConfig, criteria *string) (string, error) {
	if cfg.PromptFile != "" {
		text, _, err := evaluate.ReadBundleFile(r.judge.Bundle, cfg.PromptFile)
		if err != nil {
			return "", fmt.Errorf("the prompt file %q: %w", textbound.Head(cfg.PromptFile, 200), err)
		}
		return text, nil
	}
	if len(cfg.Prompt) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(cfg.Prompt, &s); err != nil {
		return "", errors.New("the grader's prompt is not text (a prompt command is not run)")
	}
	if s == "" {
		return "", nil
	}
	for _, name := range evaluate.TemplateVariables(s) {
		if templateVariables42[name] {
			return s, nil
		}
	}
	*criteria = s
	return "", nil
}

// templateVars42 are AgentV 4.42's template variables (buildTemplateVariables) of the test.
func (r *caseRun42) templateVars42(in *inputs42, criteria string, rubrics []evalfile.Rubric) map[string]string {
	metadata, metadataJSON := "", ""
	if len(r.c.Metadata) > 0 {
		if v, err := parseOrdered(r.c.Metadata); err == nil {
			metadata, metadataJSON = evaluate.Stringify(v), jsString(v)
		}
	}
	rubricsPretty, rubricsCompact := "", ""
	if len(rubrics) > 0 {
		items := rubricItems42(rubrics)
		rubricsPretty, rubricsCompact = evaluate.Stringify(items), jsString(items)
	}
	return map[string]string{
		keyInput:          strings.TrimSpace(in.question),
		keyOutput:         strings.TrimSpace(r.out.candidate),
		"expected_output": strings.TrimSpace(in.reference),
		"criteria":        strings.TrimSpace(criteria),
		keyMetadata:       metadata,
		"metadata_json":   metadataJSON,
		"rubrics":         rubricsPretty,
		"rubrics_json":    rubricsCompact,
		"file_changes":    "",
		"tool_calls":      "",
	}
}

// rubricItems42 are rubrics as AgentV 4.42 holds them (parseRubricItems), for {{rubrics}}.
func rubricItems42(rubrics []evalfile.Rubric) []any {
	out := make([]any, 0, len(rubrics))
	for _, rb := range rubrics {
		item := orderedObject{{"id", rb.ID}}
		if len(rb.ScoreRanges) > 0 {
			item = append(item, kv{"weight", rb.Weight})
			if rb.Outcome != "" {
				item = append(item, kv{"outcome", rb.Outcome})
			}
		} else {
			item = append(item, kv{"outcome", rb.Outcome})
		}
		if rb.Operator != "" {
			item = append(item, kv{"operator", rb.Operator})
		}
		if len(rb.ScoreRanges) == 0 {
			item = append(item, kv{"weight", rb.Weight}, kv{"required", rb.Required})
		} else if rb.Required {
			item = append(item, kv{"required", true})
		}
		if rb.MinScore != nil {
			item = append(item, kv{"min_score", *rb.MinScore}, kv{"required_min_score", math.Round(*rb.MinScore * 10)})
		}
		if len(rb.ScoreRanges) > 0 {
			ranges := make([]any, len(rb.ScoreRanges))
			for i, sr := range rb.ScoreRanges {
				ranges[i] = orderedObject{{"score_range", []any{float64(sr.Min), float64(sr.Max)}}, {"outcome", sr.Outcome}}
			}
			item = append(item, kv{"score_ranges", ranges})
		}
		out = append(out, item)
	}
	return out
}

// operatorGuidance is the guidance of the operators rubrics use, in their first order.
func operatorGuidance(rubrics []evalfile.Rubric) []string {
	var out []string
	seen := map[string]bool{}
	for _, rb := range rubrics {
		if rb.Operator != "" && !seen[rb.Operator] {
			seen[rb.Operator] = true
			out = append(out, operatorGuidance42[rb.Operator])
		}
	}
	return out
}

// rubricPrompt42 is AgentV 4.42's buildRubricPrompt.
func rubricPrompt42(question, criteria, reference, answer string, rubrics []evalfile.Rubric) string {
	parts := []string{"You are an expert grader. Evaluate the candidate answer against each rubric item below.", "",
		"[[ ## question ## ]]", question, "", "[[ ## criteria ## ]]", criteria, ""}
	if strings.TrimSpace(reference) != "" {
		parts = append(parts, "[[ ## reference_answer ## ]]", reference, "")
	}
	parts = append(parts, "[[ ## answer ## ]]", answer, "", "[[ ## rubrics ## ]]")
	if guidance := operatorGuidance(rubrics); len(guidance) > 0 {
		parts = append(parts, "", "Operator guidance:")
		for _, g := range guidance {
			parts = append(parts, "- "+g)
		}
		parts = append(parts, "")
	}
	for _, rb := range rubrics {
		label := ""
		if rb.Required {
			label += " (REQUIRED)"
		}
		if rb.Weight != 1 {
			label += " (weight: " + jsString(rb.Weight) + ")"
		}
		if rb.Operator != "" {
			label += " (operator: " + rb.Operator + ")"
		}
		parts = append(parts, "- ["+rb.ID+"]"+label+": "+rb.Outcome)
	}
	parts = append(parts, "", "For each rubric, determine if it is satisfied and provide brief reasoning.")
	return strings.Join(parts, "\n")
}

// scoreRangePrompt42 is AgentV 4.42's buildScoreRangePrompt.
func scoreRangePrompt42(question, criteria, reference, answer string, rubrics []evalfile.Rubric) string {
	parts := []string{
		"You are an expert grader. Score the candidate answer on each criterion below using the provided score ranges.",
		"For each criterion, output an integer score from 0 to 10 based on which score range best matches the answer.",
		"", "[[ ## question ## ]]", question, "", "[[ ## criteria ## ]]", criteria, ""}
	if strings.TrimSpace(reference) != "" {
		parts = append(parts, "[[ ## reference_answer ## ]]", reference, "")
	}
	parts = append(parts, "[[ ## answer ## ]]", answer, "", "[[ ## scoring_criteria ## ]]")
	for _, rb := range rubrics {
		label := ""
		if rb.Weight != 1 {
			label += " (weight: " + jsString(rb.Weight) + ")"
		}
		if rb.MinScore != nil {
			label += " [REQUIRED: min score " + jsString(*rb.MinScore) + "]"
		}
		parts = append(parts, "", "### Criterion: "+rb.ID+label)
		if rb.Operator != "" {
			parts = append(parts, "Operator: "+rb.Operator)
		}
		if rb.Outcome != "" {
			parts = append(parts, "Description: "+rb.Outcome)
		}
		if len(rb.ScoreRanges) > 0 {
			parts = append(parts, "Score ranges:")
			for _, sr := range rb.ScoreRanges {
				rng := strconv.Itoa(sr.Min)
				if sr.Min != sr.Max {
					rng += "-" + strconv.Itoa(sr.Max)
				}
				parts = append(parts, "  - Score "+rng+": "+sr.Outcome)
			}
		}
	}
	if guidance := operatorGuidance(rubrics); len(guidance) > 0 {
		parts = append(append(parts, ""), guidance...)
	}
	parts = append(parts, "", "For each criterion, provide an integer score 0-10 that matches one of its defined score ranges.")
	return strings.Join(parts, "\n")
}

// structureRepairPrompt42 is AgentV 4.42's buildStructureRepairPrompt.
func structureRepairPrompt42(validationError, invalid string) string {
	return strings.Join([]string{
		"The following evaluation response has useful grading content but invalid JSON structure.",
		"Repair it to satisfy the schema in the system prompt.",
		"Preserve the evaluation meaning, do not re-grade the answer, and return only a single JSON object.",
		"", "Validation error:", validationError, "", "Invalid response:", textbound.Head(invalid, maxRepairEcho),
	}, "\n")
}

// askGrader asks the model as AgentV 4.42's runWithRetry does: up to evaluate.MaxReplyAttempts replies until one parses,
// then, when the last one had text, one structure repair request quoting it. A grader whose replies never parse is
// skipped (SkipUnreadableReply; its test is then an Error); a call that fails is an Error, and one the budget
// stopped is skipped for the budget.
func (r *caseRun42) askGrader(system, user string, parse func(string) (grade42, error)) grade42 {
	req := llm.Request{System: strings.TrimSpace(system), User: strings.TrimSpace(user)}
	raw := orderedObject{{"userPrompt", user}, {"systemPrompt", system}}
	var usage verdict.Usage
	finish := func(g grade42, kept *verdict.Usage) grade42 {
		g.request, g.target, g.usage = raw, evaluate.JudgeTargetName, usage
		if kept != nil {
			g.tokens = &tokens42{Input: kept.PromptTokens, Output: kept.CompletionTokens}
		}
		return g
	}
	call := func(req llm.Request) (llm.Reply, *grade42) {
		reply, err := r.judge.LLM.Complete(r.ctx, req)
		usage.Add(reply.Usage)
		switch {
		case errors.Is(err, llm.ErrBudgetSpent):
			g := finish(skipped42(verdict.SkipBudgetSpent, err.Error()), nil)
			return reply, &g
		case err != nil:
			g := finish(errored42("the model could not be asked: "+err.Error()), nil)
			return reply, &g
		}
		return reply, nil
	}
	var lastErr error
	invalid := ""
	for range evaluate.MaxReplyAttempts {
		reply, failed := call(req)
		if failed != nil {
			return *failed
		}
		invalid = ""
		if strings.TrimSpace(reply.Content) != "" {
			invalid = reply.Content
		}
		if reply.FinishReason == "length" {
			lastErr = errors.New("the reply was cut at the model's token limit (finish_reason length)")
			continue
		}
		g, err := parse(reply.Content)
		if err != nil {
			lastErr = err
			continue
		}
		u := reply.Usage
		return finish(g, &u)
	}
	if invalid != "" {
		repair := llm.Request{System: req.System, User: strings.TrimSpace(structureRepairPrompt42(lastErr.Error(), invalid))}
		reply, failed := call(repair)
		if failed != nil {
			return *failed
		}
		g, err := parse(reply.Content)
		if err == nil {
			u := reply.Usage
			return finish(g, &u)
		}
		lastErr = err
	}
	why := fmt.Sprintf("the judge's replies are not valid after %d replies and a repair request: %v", evaluate.MaxReplyAttempts, lastErr)
	g := skipped42(verdict.SkipUnreadableReply, textbound.Head(why, verdict.MaxReasoningLength))
	g.assertions = []assertion42{{Text: "Grader parse failure after 3 attempts: " + textbound.Head(fmt.Sprint(lastErr), 400)}}
	return finish(g, nil)
}

// passedField matches a "passed" member whose value is a string or a bare word (AgentV's
// repairSchemaNearBooleanFields).
var passedField = regexp.MustCompile(`(?i)("passed"\s*:\s*)(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_-]*))`)

// jsonFromText42 is AgentV 4.42's parseJsonFromText: code fences removed, the text from the first '{' to the last
// '}', "passed" values that are strings or words made booleans, decoded (numbers kept as json.Number).
func jsonFromText42(text string) (map[string]any, error) {
	cleaned := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(text, "```json\n", ""), "```json", ""), "```", ""))
	if i, j := strings.IndexByte(cleaned, '{'), strings.LastIndexByte(cleaned, '}'); i >= 0 && j > i {
		cleaned = cleaned[i : j+1]
	}
	cleaned = passedField.ReplaceAllStringFunc(cleaned, func(m string) string {
		sub := passedField.FindStringSubmatch(m)
		v := strings.ToLower(strings.TrimSpace(sub[2] + sub[3]))
		if v == "true" {
			return sub[1] + "true"
		}
		return sub[1] + "false"
	})
	return evaluate.JSONFromText(cleaned)
}

// parseFreeform42 reads AgentV 4.42's freeform reply: score a number in [0, 1]; assertions, when present, a list of
// {text: string, passed: boolean, evidence?: string} (the first 8 kept); details, when present, an object.
func parseFreeform42(content string) (grade42, error) {
	obj, err := jsonFromText42(content)
	if err != nil {
		return grade42{}, err
	}
	n, ok := obj["score"].(json.Number)
	if !ok {
		return grade42{}, fmt.Errorf("the reply's score is %s, not a number", evaluate.DescribeJSON(obj["score"]))
	}
	score, err := n.Float64()
	if err != nil || score < 0 || score > 1 {
		return grade42{}, fmt.Errorf("the reply's score %s is not in [0, 1]", n)
	}
	g := grade42{score: verdict.ClampScore(score)}
	if a, ok := obj["assertions"]; ok && a != nil {
		if g.assertions, err = replyAssertions(a); err != nil {
			return grade42{}, err
		}
		if len(g.assertions) > maxFreeformAssertions {
			g.assertions = g.assertions[:maxFreeformAssertions]
		}
	}
	if d, ok := obj["details"]; ok && d != nil {
		if _, ok := d.(map[string]any); !ok {
			return grade42{}, fmt.Errorf("the reply's details is %s, not an object", evaluate.DescribeJSON(d))
		}
		if g.details, err = detailsOf(content, d); err != nil {
			return grade42{}, err
		}
	}
	if g.assertions == nil {
		g.assertions = []assertion42{}
	}
	g.verdict = verdictOf42(g.score)
	g.aspects = max(len(g.assertions), 1)
	return g, nil
}

// detailsOf re-encodes a reply's details object with its keys in the reply's order.
func detailsOf(content string, d any) (json.RawMessage, error) {
	// The reply's own order: decode the object again, ordered.
	cleaned := strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(content, "```json\n", ""), "```json", ""), "```", ""))
	if i, j := strings.IndexByte(cleaned, '{'), strings.LastIndexByte(cleaned, '}'); i >= 0 && j > i {
		cleaned = cleaned[i : j+1]
	}
	if v, err := parseOrdered([]byte(cleaned)); err == nil {
		if obj, ok := v.(orderedObject); ok {
			if det, ok := obj.get("details"); ok {
				return json.RawMessage(jsString(det)), nil
			}
		}
	}
	return json.Marshal(d)
}

// replyAssertions reads a reply's assertions list.
func replyAssertions(v any) ([]assertion42, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("the reply's assertions is %s, not a list", evaluate.DescribeJSON(v))
	}
	out := make([]assertion42, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the reply's assertions[%d] is %s, not an object", i, evaluate.DescribeJSON(item))
		}
		text, ok1 := m[kindText].(string)
		passed, ok2 := m["passed"].(bool)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("the reply's assertions[%d] needs a string text and a boolean passed", i)
		}
		a := assertion42{Text: text, Passed: passed}
		if e, ok := m["evidence"]; ok && e != nil {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("the reply's assertions[%d].evidence is %s, not a string", i, evaluate.DescribeJSON(e))
			}
			a.Evidence = &s
		}
		out = append(out, a)
	}
	return out, nil
}

// check42 is one check of a rubric reply.
type check42 struct {
	id        string
	satisfied bool
	score     float64
	reasoning *string
}

// replyChecks reads a rubric reply's checks; score reads each check's integer score 0-10 (score ranges), else its
// boolean satisfied. Every check needs a string id and reasoning (optional with scores).
func replyChecks(obj map[string]any, score bool) ([]check42, error) {
	list, ok := obj["checks"].([]any)
	if !ok {
		return nil, fmt.Errorf("the reply's checks is %s, not a list", evaluate.DescribeJSON(obj["checks"]))
	}
	out := make([]check42, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the reply's checks[%d] is %s, not an object", i, evaluate.DescribeJSON(item))
		}
		c := check42{}
		if c.id, ok = m["id"].(string); !ok {
			return nil, fmt.Errorf("the reply's checks[%d] has no string id", i)
		}
		if r, ok := m["reasoning"].(string); ok {
			c.reasoning = &r
		} else if !score || m["reasoning"] != nil {
			return nil, fmt.Errorf("the reply's checks[%d] has no string reasoning", i)
		}
		if score {
			n, ok := m["score"].(json.Number)
			f, err := n.Float64()
			if !ok || err != nil || f != math.Trunc(f) || f < 0 || f > 10 {
				return nil, fmt.Errorf("the reply's checks[%d].score is %s, not an integer from 0 to 10", i, evaluate.DescribeJSON(m["score"]))
			}
			c.score = f
		} else if c.satisfied, ok = m["satisfied"].(bool); !ok {
			return nil, fmt.Errorf("the reply's checks[%d].satisfied is %s, not a boolean", i, evaluate.DescribeJSON(m["satisfied"]))
		}
		out = append(out, c)
	}
	return out, nil
}

// checkedAll says which rubrics a reply left unchecked: the operator refuses such a reply (AgentV leaves their
// weight out of the score, so a required rubric the reply leaves out would pass).
func checkedAll(checks []check42, rubrics []evalfile.Rubric) error {
	seen := map[string]bool{}
	for _, c := range checks {
		seen[c.id] = true
	}
	var missing []string
	for _, rb := range rubrics {
		if !seen[rb.ID] {
			missing = append(missing, rb.ID)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the reply does not check rubric(s) %s", strings.Join(missing, ", "))
	}
	return nil
}

// parseChecklist42 reads a checklist reply and scores it as AgentV 4.42's calculateRubricScore: the weight of the
// satisfied rubrics over the weight of the rubrics checked (in the reply's order; ids of no rubric ignored), fail
// when a required rubric is not satisfied, else pass at 0.8.
func parseChecklist42(content string, rubrics []evalfile.Rubric) (grade42, error) {
	obj, err := jsonFromText42(content)
	if err != nil {
		return grade42{}, err
	}
	checks, err := replyChecks(obj, false)
	if err != nil {
		return grade42{}, err
	}
	if _, ok := obj["overall_reasoning"].(string); !ok {
		return grade42{}, fmt.Errorf("the reply's overall_reasoning is %s, not a string", evaluate.DescribeJSON(obj["overall_reasoning"]))
	}
	if err := checkedAll(checks, rubrics); err != nil {
		return grade42{}, err
	}
	byID := map[string]*evalfile.Rubric{}
	for i := range rubrics {
		if _, dup := byID[rubrics[i].ID]; !dup {
			byID[rubrics[i].ID] = &rubrics[i]
		}
	}
	g := grade42{assertions: []assertion42{}, aspects: len(rubrics)}
	var total, earned float64
	failedRequired := false
	for _, c := range checks {
		rb, ok := byID[c.id]
		if !ok {
			continue
		}
		total += rb.Weight
		g.assertions = append(g.assertions, assertion42{Text: "[" + rb.ID + "] " + rb.Outcome, Passed: c.satisfied, Evidence: c.reasoning})
		if c.satisfied {
			earned += rb.Weight
		} else if rb.Required {
			failedRequired = true
		}
	}
	if total > 0 {
		g.score = math.Min(1, math.Max(0, earned/total))
	}
	g.verdict = verdictOf42(g.score)
	if failedRequired {
		g.verdict = fail42
	}
	return g, nil
}

// parseScoreRanges42 reads a score-range reply and scores it as AgentV 4.42's calculateScoreRangeResult: the
// weighted mean of score/10; a criterion passes at 7 and not below its minimum (min_score, or 1.0 for required
// without one); the grader fails when a criterion is below its minimum, else passes at 0.8.
func parseScoreRanges42(content string, rubrics []evalfile.Rubric) (grade42, error) {
	obj, err := jsonFromText42(content)
	if err != nil {
		return grade42{}, err
	}
	checks, err := replyChecks(obj, true)
	if err != nil {
		return grade42{}, err
	}
	if o, ok := obj["overall_reasoning"]; ok && o != nil {
		if _, ok := o.(string); !ok {
			return grade42{}, fmt.Errorf("the reply's overall_reasoning is %s, not a string", evaluate.DescribeJSON(o))
		}
	}
	if err := checkedAll(checks, rubrics); err != nil {
		return grade42{}, err
	}
	byID := map[string]*evalfile.Rubric{}
	for i := range rubrics {
		if _, dup := byID[rubrics[i].ID]; !dup {
			byID[rubrics[i].ID] = &rubrics[i]
		}
	}
	g := grade42{assertions: []assertion42{}, aspects: len(rubrics)}
	raw := orderedObject{}
	var total, sum float64
	failedRequired := false
	for _, c := range checks {
		rb, ok := byID[c.id]
		if !ok {
			continue
		}
		normalized := c.score / 10
		raw = raw.set(rb.ID, c.score)
		total += rb.Weight
		sum += normalized * rb.Weight
		var minScore *float64
		switch {
		case rb.MinScore != nil:
			minScore = rb.MinScore
		case rb.Required:
			one := 1.0
			minScore = &one
		}
		below := minScore != nil && normalized < *minScore
		failedRequired = failedRequired || below
		desc := ""
		for _, sr := range rb.ScoreRanges {
			if c.score >= float64(sr.Min) && c.score <= float64(sr.Max) {
				desc = sr.Outcome
				break
			}
		}
		label := rb.Outcome
		if label == "" {
			label = rb.ID
		}
		g.assertions = append(g.assertions, assertion42{
			Text:   fmt.Sprintf("[%s] %s - Score: %s/10 (%s)", rb.ID, label, jsString(c.score), desc),
			Passed: !below && c.score >= 7, Evidence: c.reasoning})
	}
	if total > 0 {
		g.score = math.Min(1, math.Max(0, sum/total))
	}
	g.verdict = verdictOf42(g.score)
	if failedRequired {
		g.verdict = fail42
	}
	g.details = json.RawMessage(jsString(orderedObject{{"raw_scores", raw}, {"normalization", "score / 10"},
		{"aggregation", "weighted_average"}}))
	return g, nil
}
