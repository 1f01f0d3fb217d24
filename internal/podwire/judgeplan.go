package podwire

import (
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
)

// Containers is how many judge containers a pod gets for cases code-judged cases with codeJudgeWorkers workers:
// one per worker, at most MaxJudgeContainers and at most one per case (one without code judges, the pod's
// gate). Each container judges its cases one at a time, so the workers run in parallel across containers.
func Containers(workers int32, cases int) int32 {
	n := min(max(workers, 1), MaxJudgeContainers)
	if cases > 0 && int64(cases) < int64(n) {
		n = int32(cases)
	}
	return n
}

// CodeJudgedCases returns the ids (in request order) of the cases that have a code_judge.
func CodeJudgedCases(file *evalfile.File, ids []string) []string {
	var out []string
	for _, id := range ids {
		if c := file.Case(id); c != nil && len(Invocations(c)) > 0 {
			out = append(out, id)
		}
	}
	return out
}

// Partition returns the share of judge container index of n: the cases whose position in cases is index modulo
// n, in order.
func Partition(cases []string, n, index int) []string {
	if n <= 0 || index < 0 || index >= n {
		return nil
	}
	var out []string
	for i := index; i < len(cases); i += n {
		out = append(out, cases[i])
	}
	return out
}

// Invocations returns the evaluator keys (evalfile.EvaluatorConfig.Key) of the case's code_judge scripts: every
// code_judge evaluator, composite members included, and every composite with a code_judge aggregator. These are
// the keys evaluate.Judge.RunCodeJudges reports and the only ones a judge may report for the case.
func Invocations(c *evalfile.Case) []string {
	var out []string
	var walk func(ev *evalfile.EvaluatorConfig)
	walk = func(ev *evalfile.EvaluatorConfig) {
		if ev.Type == evalfile.TypeCodeJudge {
			out = append(out, ev.Key)
		}
		if ev.Composite == nil {
			return
		}
		for _, m := range ev.Composite.Members {
			walk(m)
		}
		if ev.Composite.Script != nil {
			out = append(out, ev.Key)
		}
	}
	for _, ev := range c.Evaluators {
		walk(ev)
	}
	return out
}

// Expected is what judge container index may report: for each case of its share, the keys of its code_judge
// invocations.
func Expected(file *evalfile.File, ids []string, n, index int) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, id := range Partition(CodeJudgedCases(file, ids), n, index) {
		keys := map[string]bool{}
		for _, k := range Invocations(file.Case(id)) {
			keys[k] = true
		}
		out[id] = keys
	}
	return out
}
