package judgerunner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/jsonlresult"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
	"github.com/evalrun-operator/evalrun-operator/internal/podfiles"
)

// codeJudgeCases returns the ids (in request order) of the cases that have a code_judge.
func codeJudgeCases(file *evalfile.File, ids []string) []string {
	var out []string
	for _, id := range ids {
		c := file.Case(id)
		if c == nil {
			continue
		}
		for _, ev := range c.Evaluators {
			if ev.HasCodeJudge() {
				out = append(out, id)
				break
			}
		}
	}
	return out
}

// runCodeJudges runs the code_judge evaluators of every case that has output in the snapshot out, with at most
// CodeJudgeWorkers at once, and writes their results to judgesPath (atomically). Cases without output are not
// judged here: the collector reports them as errors.
func runCodeJudges(ctx context.Context, cfg *layout.RunConfig, file *evalfile.File, ids []string, p layout.Output,
	judgesPath, shell string, log io.Writer) (err error) {
	threshold, err := evaluate.ParseThreshold(cfg.PassThreshold)
	if err != nil {
		return err
	}
	judged := codeJudgeCases(file, ids)
	out, err := newJudgeWriter(judgesPath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.finish(err == nil); err == nil {
			err = cerr
		}
	}()
	if len(judged) == 0 {
		return nil
	}
	judge := &evaluate.Judge{
		Threshold: threshold,
		CodeJudges: evaluate.ScriptRunner{
			Timeout: layout.Seconds(cfg.CodeJudgeTimeoutSeconds),
			Dir:     cfg.WorkingDir,
			Shell:   shell,
		},
	}
	n := int(cfg.CodeJudgeWorkers)
	podfiles.Logf(log, "Running code judges cases=%d workers=%d\n", len(judged), n)
	work := make(chan *jsonlresult.Response)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for resp := range work {
				c := file.Case(resp.ID)
				res := judge.RunCodeJudges(ctx, c, resp)
				out.add(resp.ID, res)
			}
		}()
	}
	feed := func(resp *jsonlresult.Response) error {
		select {
		case work <- resp:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var feedErr error
	if cfg.Batching == string(evalsv1alpha1.BatchingPerCase) {
		for _, id := range judged {
			resp, perr := jsonlresult.ParseSingleFile(id, p.CaseOutput(id), 0)
			if perr != nil {
				continue // no usable output: the collector reports the case as an error
			}
			if feedErr = feed(resp); feedErr != nil {
				break
			}
		}
	} else {
		_, feedErr = jsonlresult.ParseBatchFile(p.BatchOutput(), judged, jsonlresult.Options{}, feed)
		if errors.Is(feedErr, jsonlresult.ErrNoOutputFile) {
			feedErr = nil
		}
	}
	close(work)
	wg.Wait()
	if feedErr != nil {
		return fmt.Errorf("code judges: %w", feedErr)
	}
	return out.err
}

// judgeWriter writes judges.jsonl through a temporary file renamed into place at the end.
type judgeWriter struct {
	path string
	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
	err  error
}

func newJudgeWriter(path string) (*judgeWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".judges-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("create the code judge results file: %w", err)
	}
	w := bufio.NewWriter(f)
	return &judgeWriter{path: path, f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (j *judgeWriter) add(id string, results map[string]evaluate.EvaluatorResult) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for key, r := range results {
		if j.err != nil {
			return
		}
		if err := j.enc.Encode(layout.JudgeLine{CaseID: id, Key: key, Result: r}); err != nil {
			j.err = fmt.Errorf("write code judge results: %w", err)
		}
	}
}

func (j *judgeWriter) finish(keep bool) error {
	err := j.w.Flush()
	if err == nil {
		// The collector, which reads the verdicts, runs as another user.
		err = j.f.Chmod(0o644)
	}
	if err == nil {
		err = j.f.Sync()
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err == nil && keep {
		err = os.Rename(j.f.Name(), j.path)
	}
	if err != nil || !keep {
		_ = os.Remove(j.f.Name())
	}
	if err != nil {
		return fmt.Errorf("write code judge results: %w", err)
	}
	return nil
}
