package collector

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/evalrun-operator/evalrun-operator/internal/evaluate"
	"github.com/evalrun-operator/evalrun-operator/internal/layout"
)

// readJudgeResults reads judges.jsonl into results by case id and evaluator key. A missing file means no results.
func readJudgeResults(path string) (map[string]map[string]evaluate.EvaluatorResult, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open code judge results: %w", err)
	}
	// Read-only: a close error cannot lose data, and everything was read or reported by then.
	defer func() { _ = f.Close() }()
	out := map[string]map[string]evaluate.EvaluatorResult{}
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var l layout.JudgeLine
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return out, fmt.Errorf("read code judge results: %w", err)
		}
		m := out[l.CaseID]
		if m == nil {
			m = map[string]evaluate.EvaluatorResult{}
			out[l.CaseID] = m
		}
		m[l.Key] = l.Result
	}
	return out, nil
}
