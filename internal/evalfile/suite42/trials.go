package suite42

import (
	"math"

	yaml "go.yaml.in/yaml/v3"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile/yamltree"
)

// A suite's trials (docs/design/trials.md): AgentV 4.42 reads execution.trials at the suite level only
// (extractTrialsConfig in loaders/config-loader.ts): count (absent or 1: each test once), strategy (pass_at_k, the
// default; mean; confidence_interval) and cost_limit_usd (or costLimitUsd). The reader maps them onto the EvalRun's
// trials (evalfile.FileTrials, which spec.trials overrides): count is the number of trials, and pass_at_k, a test
// passing when any of its trials passes, is the pass rate 1/count (evalfile.PassAtKRate). What the operator cannot
// honour is refused with its key and line, and so is what AgentV warns about and ignores (an invalid count or
// strategy, or a cost limit that is not a positive number): a suite that asks for trials gets them, or is refused.

// Keys of execution.trials.
const (
	keyTrials     = "trials"
	keyCount      = "count"
	keyStrategy   = "strategy"
	keyCostLimit  = "cost_limit_usd"
	keyCostLimitC = "costLimitUsd"
)

// AgentV 4.42's trial strategies (VALID_TRIAL_STRATEGIES).
const (
	strategyPassAtK            = "pass_at_k"
	strategyMean               = "mean"
	strategyConfidenceInterval = "confidence_interval"
)

// trialsKeySpecs are the keys of the suite's execution.trials; any other is unknown (AgentV ignores it).
var trialsKeySpecs = []keySpec{{key: keyCount}, {key: keyStrategy}, {key: keyCostLimit}, {key: keyCostLimitC}}

// whyTrialsSuiteLevel is why a test's own execution.trials is refused.
const whyTrialsSuiteLevel = "AgentV 4.42 reads trials at the suite level only (the suite's execution.trials) and " +
	"would answer this test once"

// trials reads the suite's execution.trials (exec is the suite's execution, n its node): the suite's trials, or nil
// for one trial (no trials key, no count, or a count of 1, as in AgentV) or when a problem was recorded.
func (sp *suiteParser) trials(exec *yamltree.Value, execNode *yaml.Node) *evalfile.FileTrials {
	v := exec.Get(keyTrials)
	if v.IsNull() {
		return nil
	}
	p := sp.p
	path := yamltree.JoinPath(keyExecution, keyTrials)
	line := keyLine(execNode, keyTrials, v)
	if v.Kind != yamltree.KindObject {
		p.AddAt(path, line, "must be a mapping such as {count: 3}, got %s (AgentV 4.42 ignores any other value and "+
			"answers each test once)", describe(v))
		return nil
	}
	n := member(execNode, keyTrials)
	for i, k := range v.Keys {
		if _, known := specOf(trialsKeySpecs, k); !known {
			sp.warnAt(yamltree.JoinPath(path, k), keyLine(n, k, v.Vals[i]), "unknown execution.trials key %q: AgentV 4.42 ignores it", k)
		}
	}

	count, countLine, ok := sp.trialCount(v, n, path)
	if !ok {
		return nil
	}
	if count <= 1 {
		// AgentV reads nothing else of a single trial: what else is written is ignored, and said so.
		why := "without a count"
		if count == 1 {
			why = "with count 1"
		}
		for _, k := range []string{keyStrategy, keyCostLimit, keyCostLimitC} {
			if kv := v.Get(k); !kv.IsNull() {
				sp.warnAt(yamltree.JoinPath(path, k), keyLine(n, k, kv), "ignored: %s AgentV 4.42 answers each test once "+
					"and reads no other trials key", why)
			}
		}
		return nil
	}
	valid := sp.trialStrategy(v, n, path)
	for _, k := range []string{keyCostLimit, keyCostLimitC} {
		if kv := v.Get(k); !kv.IsNull() {
			valid = false
			p.AddAt(yamltree.JoinPath(path, k), keyLine(n, k, kv), "not supported: a cost limit stops AgentV's trials of "+
				"a test once they have cost that much; the operator runs every trial, each in its own pod, and bounds "+
				"the run's cost with the EvalRun's spec.target.maxCostUSD, which all its trials share")
		}
	}
	if !valid {
		return nil
	}
	t := evalfile.TrialsPassAtK(count)
	t.Line = countLine
	return t
}

// trialCount reads execution.trials.count and its line: 0 when absent; ok is false when a problem was recorded.
// AgentV 4.42 reads any whole number from 1 (warning about, and ignoring, any other value); the operator refuses any
// other, and a count above spec.trials.count's bound.
func (sp *suiteParser) trialCount(v *yamltree.Value, n *yaml.Node, path string) (count, line int, ok bool) {
	cv := v.Get(keyCount)
	if cv.IsNull() {
		return 0, 0, true
	}
	cp := yamltree.JoinPath(path, keyCount)
	line = keyLine(n, keyCount, cv)
	switch {
	case cv.Kind != yamltree.KindNumber || cv.Float != math.Trunc(cv.Float) || cv.Float < 1:
		sp.p.AddAt(cp, line, "must be a whole number of trials from 1 to %d, got %s (AgentV 4.42 warns and answers each "+
			"test once; the operator refuses it: a suite that asks for trials gets them)", evalfile.MaxTrials, describe(cv))
		return 0, line, false
	case cv.Float > evalfile.MaxTrials:
		sp.p.AddAt(cp, line, "must be at most %d, got %s: the EvalRun's spec.trials.count has the same bound (each "+
			"trial of each shard is a pod)", evalfile.MaxTrials, describe(cv))
		return 0, line, false
	}
	return int(cv.Float), line, true
}

// trialStrategy checks execution.trials.strategy: pass_at_k (the default) is read; mean and confidence_interval,
// which decide a test by an aggregate score, are refused, and so is any other value (AgentV 4.42 warns and uses
// pass_at_k). It reports whether the strategy is pass_at_k.
func (sp *suiteParser) trialStrategy(v *yamltree.Value, n *yaml.Node, path string) bool {
	sv := v.Get(keyStrategy)
	if sv.IsNull() {
		return true
	}
	kp, line := yamltree.JoinPath(path, keyStrategy), keyLine(n, keyStrategy, sv)
	switch {
	case sv.Kind == yamltree.KindString && sv.Str == strategyPassAtK:
		return true
	case sv.Kind == yamltree.KindString && (sv.Str == strategyMean || sv.Str == strategyConfidenceInterval):
		sp.p.AddAt(kp, line, "not supported: strategy %s decides a test by an aggregate of its trials' scores; the "+
			"operator decides a case by its pass rate over its trials (the EvalRun's spec.trials.passRate), one rule "+
			"for every run, and reports the mean score with its interval anyway: write %s (a case passes when any "+
			"trial passes), or remove the strategy and set spec.trials on the EvalRun", sv.Str, strategyPassAtK)
	default:
		sp.p.AddAt(kp, line, "must be %s, got %s (AgentV 4.42 knows %s, %s and %s, and warns and uses %s for any "+
			"other value; the operator refuses it)", strategyPassAtK, describe(sv), strategyPassAtK, strategyMean,
			strategyConfidenceInterval, strategyPassAtK)
	}
	return false
}
