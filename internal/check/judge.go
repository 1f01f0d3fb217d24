package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
)

// judging is the judging step of `collector check --eval`: every requested case is judged with the evaluators of
// the eval file as its response arrives, exactly as the in-pod collector judges it. Code judges run only with
// --run-code-judges (in the eval file's directory); otherwise they are reported as skipped.
type judging struct {
	ctx   context.Context
	file  *evalfile.File
	judge *evaluate.Judge
	// keep is false for --format summary: only the summary is accumulated, not the per-case results.
	keep    bool
	results map[string]evaluate.CaseResult
	judged  map[string]bool
	summary evaluate.SummaryBuilder
}

// judgingFile is the EvalRun's spec.judging as `collector check --judging` reads it: the settings that change
// verdicts, so that a local check gives the in-cluster ones.
type judgingFile struct {
	Evaluators    []map[string]any `json:"evaluators"`
	PassThreshold string           `json:"passThreshold"`
}

// loadJudging reads --judging (YAML or JSON) and applies --pass-threshold over it.
func loadJudging(cfg *config) (judgingFile, error) {
	var j judgingFile
	if cfg.judgingPath != "" {
		data, err := os.ReadFile(cfg.judgingPath)
		if err != nil {
			return j, fmt.Errorf("reading the judging file: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, &j); err != nil {
			return j, usageError(fmt.Sprintf("judging file %s: %v (want the EvalRun's spec.judging: evaluators, passThreshold)", cfg.judgingPath, err))
		}
	}
	if cfg.passThreshold != "" {
		j.PassThreshold = cfg.passThreshold
	}
	return j, nil
}

// newJudging returns the judging step for the plan, or nil when the check has no eval file.
func newJudging(ctx context.Context, cfg *config, file *evalfile.File, keep bool) (*judging, error) {
	if file == nil {
		return nil, nil
	}
	settings, err := loadJudging(cfg)
	if err != nil {
		return nil, err
	}
	threshold := evaluate.DefaultThreshold
	if settings.PassThreshold != "" {
		if threshold, err = evaluate.ParseThreshold(settings.PassThreshold); err != nil {
			return nil, usageError(fmt.Sprintf("pass threshold: %v", err))
		}
	}
	j := &judging{
		ctx:     ctx,
		file:    file,
		judge:   &evaluate.Judge{Threshold: threshold},
		keep:    keep,
		results: map[string]evaluate.CaseResult{},
		judged:  map[string]bool{},
	}
	if cfg.runCodeJudges {
		j.judge.CodeJudges = evaluate.ScriptRunner{Dir: filepath.Dir(cfg.evalPath), Timeout: evaluate.DefaultCodeJudgeTimeout}
	}
	return j, nil
}

// observe judges the response of one requested case.
func (j *judging) observe(resp *jsonlresult.Response) {
	c := j.file.Case(resp.ID)
	if c == nil {
		return
	}
	r := j.judge.JudgeCase(j.ctx, c, resp, nil)
	j.summary.Add(r)
	j.judged[resp.ID] = true
	if j.keep {
		j.results[resp.ID] = r
	}
}

// apply judges the requested cases that had no response as missing, then writes the judgements into the
// document's cases and the run summary into its summary.
func (j *judging) apply(doc *Document, ids []string) {
	for _, id := range ids {
		if j.judged[id] {
			continue
		}
		r := evaluate.MissingCase(id)
		j.summary.Add(r)
		if j.keep {
			j.results[id] = r
		}
	}
	for i := range doc.Cases {
		c := &doc.Cases[i]
		r, ok := j.results[c.ID]
		if !ok {
			continue
		}
		score := r.Score
		c.Score = &score
		c.Verdict = r.Verdict
		c.Evaluators = r.Evaluators
		c.VerdictReason = r.Error
		if c.VerdictReason == "" {
			c.VerdictReason = r.Reason
		}
	}
	s := j.summary.Summary()
	doc.Summary.Summary = &s
}
