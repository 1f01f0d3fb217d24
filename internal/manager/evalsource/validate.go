package evalsource

import (
	"errors"
	"fmt"
	"slices"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/manager/children"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// File is what validating an eval file established.
type File struct {
	// CaseIDs are the case ids in file order; CodeJudgeCases how many cases have a code_judge.
	CaseIDs        []string
	CodeJudgeCases int
	// Data is the file's text, nil for a bucket object read as a stream; Digest its sha256.
	Data   []byte
	Digest string
	facts  *evalfile.Facts
	// parsed is the parsed file, nil for a bucket object read as a stream (a bundle's input files are checked on it).
	parsed *evalfile.File
}

// Trials are the file's own trials (an AgentV 4.42 suite's execution.trials), nil when it has none; a streamed
// bucket object's as Scan read them.
func (e File) Trials() *evalfile.FileTrials {
	if e.facts == nil {
		return nil
	}
	return e.facts.Trials
}

// newFile returns the File of a valid file.
func newFile(f *evalfile.Facts, data []byte, digest string) File {
	return File{CaseIDs: f.CaseIDs(), CodeJudgeCases: f.CodeJudgeCases(), facts: f, Data: data, Digest: digest}
}

// ValidateEvalFile parses the eval file with the run's default evaluators. It returns the case ids in file
// order and how many cases have a code_judge, or a message listing the problems (bounded by the parser).
func ValidateEvalFile(run *evalsv1alpha1.EvalRun, data []byte) (File, string) {
	defaults, err := children.DefaultEvaluators(run)
	if err != nil {
		return File{}, "invalid eval file: " + err.Error()
	}
	f, err := evalfile.Parse(data, evalfile.WithDefaultEvaluators(defaults))
	if err != nil {
		return File{}, invalidMessage(err)
	}
	file := newFile(evalfile.FactsOf(f), data, children.EvalSHA256(data))
	file.parsed = f
	return file, ""
}

// invalidMessage is the InvalidEvalFile message of a parse error: the problems (bounded by the parser), or the
// error.
func invalidMessage(err error) string {
	var verr *evalfile.ValidationError
	if errors.As(err, &verr) {
		return verr.Error()
	}
	return "invalid eval file: " + err.Error()
}

// JudgeLoad is what judging the file's cases takes, for run (which may name a model endpoint): with the file's own
// trials, every case answered and judged that many times unless run's spec sets its trials.
func (e File) JudgeLoad(run *evalsv1alpha1.EvalRun) children.JudgeLoad {
	load := children.JudgeLoad{CodeJudgeCases: e.CodeJudgeCases}
	if e.facts != nil {
		load.LLMRequests, load.LLMRequestsPerCase = e.facts.LLMRequests(run.Spec.Judging != nil && run.Spec.Judging.LLM != nil)
		load.FileTrials = e.facts.Trials
	}
	return load
}

// JudgedByID reports whether every case is judged by its id and the evaluators all inherit (see
// evalfile.JudgedByID and podwire.RunConfig.SharedEvaluators), with a model endpoint or without.
func (e File) JudgedByID(llm bool) bool {
	return e.facts != nil && evalfile.JudgedByID(e.facts, llm)
}

// CheckSplit checks that the eval file splits into shards whose first shard holds exactly its cases (the pods
// split it the same way), or says why not.
func CheckSplit(data []byte, ids []string, shards int, defaults []map[string]any) string {
	lo, hi := podwire.ShardRange(len(ids), shards, 0)
	sub, err := evalfile.Subset(data, func(i int) bool { return i >= lo && i < hi })
	if err == nil {
		var f *evalfile.File
		if f, err = evalfile.Parse(sub, evalfile.WithDefaultEvaluators(defaults)); err == nil && !slices.Equal(f.CaseIDs(), ids[lo:hi]) {
			err = fmt.Errorf("its first shard holds %d cases instead of %d", len(f.CaseIDs()), hi-lo)
		}
	}
	if err != nil {
		return "invalid eval file: it cannot be split into shards: " + err.Error()
	}
	return ""
}

// Defaults returns the run's default evaluators (spec.judging.evaluators); Read has already rejected malformed
// ones.
func Defaults(run *evalsv1alpha1.EvalRun) []map[string]any {
	defaults, _ := children.DefaultEvaluators(run)
	return defaults
}
