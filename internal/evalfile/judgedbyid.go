package evalfile

// CaseSource is what JudgedByID reads of an eval file: a parsed File, or the Facts the manager
// reads a large file's stream into.
type CaseSource interface {
	NumCases() int
	SharedEvaluators() bool
	LightCase(i int) (*Case, bool)
}

// JudgedByID reports whether every case of f is judged by its id and the evaluators all its cases inherit
// (File.SharedEvaluators), which read nothing of the case (ReadsCase); with a model endpoint (withModel), cases
// without evaluators get an llm_judge, which reads them. A reader that trusts this may then read the file's header
// only (ParseShared). False for no source (a nil interface) or an empty one.
func JudgedByID(f CaseSource, withModel bool) bool {
	if f == nil || f.NumCases() == 0 || !f.SharedEvaluators() {
		return false
	}
	c, ok := f.LightCase(0)
	if !ok {
		return false
	}
	return !ReadsCase(c.Evaluators) && (len(c.Evaluators) > 0 || !withModel)
}

// ReadsCase reports whether judging with evs reads anything of the case but its id and evaluators: field_accuracy
// reads its expected messages, a code_judge (or a composite's code_judge aggregator) its whole case, llm_judge and
// rubric evaluators its question, expected outcome and messages, and an evaluator of a type the judging engine (internal/evaluate) does not
// know is assumed to. tool_trajectory, latency, cost and token_usage evaluators read only the response. For evaluators that do not, a case with only its id and
// evaluators judges the same (see File.LightCase).
func ReadsCase(evs []*EvaluatorConfig) bool {
	for _, ev := range evs {
		switch ev.Type {
		case TypeToolTrajectory, TypeLatency, TypeCost, TypeTokenUsage:
		case TypeComposite:
			if ev.Composite == nil || ev.Composite.Aggregator == AggregatorCodeJudge || ReadsCase(ev.Composite.Members) {
				return true
			}
		default:
			return true
		}
	}
	return false
}
