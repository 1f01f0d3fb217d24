package assess

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/textbound"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A run's judging is every setting of its pinned run.json that can change a case's verdict or score, given the
// same eval file and the same answer: a resume carries the earlier run's verdicts only when its judging is the
// same as the resumed run's (docs/rejudge.md lists each setting, and why the others do not count).

// judgingSetting is one setting of a run's judging: where the spec sets it and its value, as text.
type judgingSetting struct {
	// Name is the setting as the spec names it (for a message).
	Name string
	// Value is the setting's value as a person reads it; Key, when set, is what is compared instead of Value (a
	// decimal's value, whatever its spelling).
	Value string
	Key   string
}

// unset is the value of a setting the run does not have.
const unset = "unset"

// maxJudgingValue bounds each value a judging difference shows.
const maxJudgingValue = 120

// judgingOf is THE judging of a run, from its pinned run.json, in a fixed order: the pass threshold, the default
// evaluators, the eval bundle's digest (the files the judges read beside the eval file), how the judges show input
// files (spec.judging.inputFiles: unset is the format's own, which an explicit value equal to it differs from here:
// a resume refused, never a verdict carried wrongly), the LLM judges' endpoint,
// model, request timeout and budgets, and the code judges' image and timeout (unset without code judges). Settings
// that cannot change a case's verdict (credentials, concurrency and rates, deadlines sized from the run's load,
// shards, storage, the runner's settings, successPolicy, which is evaluated over all results at the end) are not
// in it.
func judgingOf(cfg podwire.RunConfig) []judgingSetting {
	threshold := judgingSetting{Name: "spec.judging.passThreshold", Value: cfg.PassThreshold}
	if f, err := verdict.ParseThreshold(cfg.PassThreshold); err == nil {
		threshold.Key = strconv.FormatFloat(f, 'g', -1, 64)
	}
	evaluators := unset
	if len(cfg.DefaultEvaluators) > 0 {
		data, err := json.Marshal(cfg.DefaultEvaluators) // map keys sorted: one spelling per value
		if err != nil {
			data = fmt.Appendf(nil, "%v", cfg.DefaultEvaluators)
		}
		evaluators = string(data)
	}
	bundleDigest := unset
	if cfg.Bundle != nil {
		bundleDigest = cfg.Bundle.SHA256
	}
	llm := llmJudging(cfg.LLM)
	out := make([]judgingSetting, 0, 6+len(llm))
	inputFiles := cfg.InputFiles
	if inputFiles == "" {
		// Unset (and a run.json written before the field): the eval file format's own; the eval files of the two
		// runs are the same, so the same value.
		inputFiles = unset
	}
	out = append(out, threshold,
		judgingSetting{Name: "spec.judging.evaluators", Value: evaluators},
		judgingSetting{Name: "spec.evalFile.bundle (the digest of its files)", Value: bundleDigest},
		judgingSetting{Name: "spec.judging.inputFiles", Value: inputFiles})
	out = append(out, llm...)
	image, timeout := unset, unset
	if cfg.CodeJudges {
		image, timeout = cfg.CodeJudgeImage, strconv.Itoa(int(cfg.CodeJudgeTimeoutSeconds))
	}
	out = append(out,
		judgingSetting{Name: "the code judges' image (spec.judging.image, else the manager's --judge-image)", Value: image},
		judgingSetting{Name: "spec.judging.codeJudgeTimeoutSeconds", Value: timeout})
	return out
}

// llmJudging is the part of a run's judging its LLM judges make: without an endpoint they are Skipped, so that
// each setting is unset.
func llmJudging(l *podwire.LLM) []judgingSetting {
	budget := func(n int64) string {
		if n <= 0 {
			return "none"
		}
		return strconv.FormatInt(n, 10)
	}
	v := []string{unset, unset, unset, unset, unset, unset}
	if l != nil {
		delimiters := l.AnswerDelimiters
		if delimiters == "" {
			// run.json written before the field: AgentV's, the default.
			delimiters = string(evalsv1alpha1.DefaultAnswerDelimiters)
		}
		v = []string{l.BaseURL, l.Model, strconv.Itoa(int(l.TimeoutSeconds)), budget(l.RunMaxRequests), budget(l.RunMaxTokens), delimiters}
	}
	return []judgingSetting{
		{Name: "spec.judging.llm.baseURL", Value: v[0]},
		{Name: "spec.judging.llm.model", Value: v[1]},
		{Name: "spec.judging.llm.timeoutSeconds", Value: v[2]},
		{Name: "spec.judging.llm.maxRequests", Value: v[3]},
		{Name: "spec.judging.llm.maxTokens", Value: v[4]},
		{Name: "spec.judging.llm.answerDelimiters", Value: v[5]},
	}
}

// JudgingDifferences names each setting of the judging of there (an earlier run's run.json) that differs from
// here (this run's), with both values (each bounded); none when the runs judge alike.
func JudgingDifferences(there, here podwire.RunConfig) []string {
	a, b := judgingOf(there), judgingOf(here)
	var out []string
	for i, h := range b {
		// judgingOf has the same settings in the same order for every run.
		if t := a[i]; t.compared() != h.compared() {
			out = append(out, h.describe(t))
		}
	}
	return out
}

// compared is what two runs' values of a setting are compared by.
func (s judgingSetting) compared() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Value
}

// describe says how the setting s (this run's) differs from there (the earlier run's).
func (s judgingSetting) describe(there judgingSetting) string {
	return fmt.Sprintf("%s is %s there, %s here", s.Name, quoteValue(there.Value), quoteValue(s.Value))
}

// quoteValue quotes a value for a message, bounded to maxJudgingValue bytes.
func quoteValue(v string) string {
	if v == unset {
		return v
	}
	return strconv.Quote(textbound.Head(v, maxJudgingValue))
}

// JudgingMismatch is the message of a resume whose source judged under other settings (differences, from
// JudgingDifferences), within maxConditionMessage: it names each difference (as many as fit) and says what to do.
func JudgingMismatch(from string, differences []string) string {
	advice := fmt.Sprintf(": its verdicts cannot be carried. Re-judge EvalRun %s with this judging first (spec.rejudge.from, "+
		"kubectl evalrun rejudge %s) and resume from that run", from, from)
	head := fmt.Sprintf("EvalRun %s judged under other settings than this run: ", from)
	list := textbound.Head(strings.Join(differences, "; "), MaxConditionMessage-len(head)-len(advice))
	return head + list + advice
}
