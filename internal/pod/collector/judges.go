package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	"github.com/evalrun-operator/evalrun-operator/internal/evalfile"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// Verdicts are the code judges' results the collector accepted, by case id and evaluator key.
type Verdicts = map[string]map[string]verdict.EvaluatorResult

// judgeEnd is the collector's side of one judge container's judge-end FIFO.
type judgeEnd struct {
	index int
	r     *podwire.JudgeEndReader
	// expected are the invocations this container may report: its share of the cases and their code_judge keys.
	expected map[string]map[string]bool
}

// connectJudges opens every judge container's judge-end FIFO and reads its judge runner's key, waiting until
// ctx ends. It must run before the snapshot is marked ready: until then no code_judge script exists, so the
// first line of each FIFO is its judge runner's. A judge that did not connect by then is given up for good (a
// key read later could be a script's), and why is returned.
func connectJudges(ctx context.Context, pod podwire.Pod, n int) ([]*podwire.JudgeEndReader, []string) {
	type opened struct {
		i   int
		r   *podwire.JudgeEndReader
		err error
	}
	ch := make(chan opened, n)
	for i := range n {
		// Opening blocks until the judge runner opens the write end; a judge that never does leaves this
		// goroutine blocked, holding nothing but the attempt.
		go func() {
			r, err := podwire.OpenJudgeEndReader(pod.JudgeEnd(i))
			ch <- opened{i, r, err}
		}()
	}
	readers := make([]*podwire.JudgeEndReader, n)
	var problems []string
	for pending := n; pending > 0; pending-- {
		select {
		case o := <-ch:
			if o.err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", podwire.JudgeContainer(o.i), o.err))
				continue
			}
			readers[o.i] = o.r
		case <-ctx.Done():
			var missing []string
			for i, r := range readers {
				if r == nil {
					missing = append(missing, podwire.JudgeContainer(i))
				}
			}
			// Whatever connects from now on is never read.
			go func() {
				for range pending {
					if o := <-ch; o.r != nil {
						_ = o.r.Close()
					}
				}
			}()
			problems = append(problems, fmt.Sprintf("%s did not start in time", strings.Join(missing, ", ")))
			return readers, problems
		}
	}
	return readers, problems
}

// judgeReport is what one judge container reported.
type judgeReport struct {
	verdicts Verdicts
	// problems are the facts the collection's message carries: rejected frames and lines, an end frame that never
	// came, processes that survived.
	problems []string
	// landlockABI is what the judge's end frame reported (ended: it sent one).
	landlockABI int
	ended       bool
}

// readJudge reads judge end je until its judge runner's end frame (or EOF, or deadline) and keeps the lines that
// name an invocation it expects, the first of each; everything else is recorded as a problem.
func readJudge(je judgeEnd, deadline time.Time) judgeReport {
	rep := judgeReport{verdicts: Verdicts{}}
	name := podwire.JudgeContainer(je.index)
	var rejected []string
	reject := func(what string) {
		if len(rejected) < 3 {
			rejected = append(rejected, what)
		}
	}
	nRejected := 0
	ended := false
read:
	for !ended {
		payload, err := je.r.Next(deadline)
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				rep.problems = append(rep.problems, name+" ended before it reported every case (it crashed or was killed)")
			case errors.Is(err, os.ErrDeadlineExceeded):
				rep.problems = append(rep.problems, name+" did not finish within the judge deadline")
			default:
				rep.problems = append(rep.problems, name+": "+err.Error())
			}
			break read
		}
		var f podwire.JudgeFrame
		if err := json.Unmarshal(payload, &f); err != nil {
			nRejected++
			reject("an undecodable frame")
			continue
		}
		if f.End != nil {
			ended = true
			rep.ended, rep.landlockABI = true, f.End.LandlockABI
			if f.End.Error != "" {
				rep.problems = append(rep.problems, name+": "+f.End.Error)
			}
			if f.End.Survivors > 0 {
				rep.problems = append(rep.problems, fmt.Sprintf("%s: %d processes of its scripts could not be killed", name, f.End.Survivors))
			}
			continue
		}
		keys, ok := je.expected[f.CaseID]
		if !ok {
			nRejected++
			reject(fmt.Sprintf("case %q is not %s's", f.CaseID, name))
			continue
		}
		for _, l := range f.Results {
			switch _, seen := rep.verdicts[l.CaseID][l.Key]; {
			case l.CaseID != f.CaseID || !keys[l.Key]:
				nRejected++
				reject(fmt.Sprintf("case %q evaluator %q was not asked of %s", l.CaseID, l.Key, name))
			case seen:
				nRejected++
				reject(fmt.Sprintf("case %q evaluator %q was reported again", l.CaseID, l.Key))
			default:
				m := rep.verdicts[l.CaseID]
				if m == nil {
					m = map[string]verdict.EvaluatorResult{}
					rep.verdicts[l.CaseID] = m
				}
				m[l.Key] = l.Result
			}
		}
	}
	if nRejected > 0 {
		rep.problems = append(rep.problems, fmt.Sprintf("%s: %d results ignored (%s)", name, nRejected, strings.Join(rejected, "; ")))
	}
	if je.r.Skipped > 0 {
		rep.problems = append(rep.problems, fmt.Sprintf("%s: %d writes into its FIFO were not its judge runner's and were ignored", name, je.r.Skipped))
	}
	return rep
}

// collectVerdicts reads every connected judge's report, in parallel, until ctx's deadline, and merges them. It
// also returns the lowest Landlock ABI the judges' end frames report (nil when none ended).
func collectVerdicts(ctx context.Context, file *evalfile.File, ids []string, readers []*podwire.JudgeEndReader) (Verdicts, []string, *int32) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(24 * time.Hour)
	}
	n := len(readers)
	ch := make(chan judgeReport, n)
	started := 0
	for i, r := range readers {
		if r == nil {
			continue
		}
		started++
		je := judgeEnd{index: i, r: r, expected: podwire.Expected(file, ids, n, i)}
		go func() { ch <- readJudge(je, deadline) }()
	}
	out := Verdicts{}
	problems := make([]string, 0, started)
	var abi *int32
	for range started {
		rep := <-ch
		for id, m := range rep.verdicts {
			out[id] = m // shares are disjoint
		}
		problems = append(problems, rep.problems...)
		if rep.ended && (abi == nil || int32(rep.landlockABI) < *abi) {
			abi = ptr.To(int32(min(max(rep.landlockABI, 0), 1000)))
		}
	}
	// Every FIFO stays open until every judge is done: a script that opens another judge's FIFO to write into it
	// must not block for want of a reader (its own case would time out).
	for _, r := range readers {
		if r != nil {
			_ = r.Close()
		}
	}
	sort.Strings(problems)
	return out, problems, abi
}

// noteVerdicts keeps the accepted verdicts in the collector's own note (0600: no judge can read it), so that a
// collector restarted after judging resumes with them.
func noteVerdicts(pod podwire.Pod, v Verdicts, problems []string, abi *int32) error {
	return podwire.WriteFileAtomic(pod.JudgeVerdicts(), 0o600, func(w io.Writer) error {
		return json.NewEncoder(w).Encode(verdictsNote{Verdicts: v, Problems: problems, LandlockABI: abi})
	})
}

type verdictsNote struct {
	Verdicts    Verdicts `json:"verdicts"`
	Problems    []string `json:"problems,omitempty"`
	LandlockABI *int32   `json:"landlockABI,omitempty"`
}

func readVerdictsNote(pod podwire.Pod) (*verdictsNote, error) {
	var n verdictsNote
	if err := podwire.ReadJSON(pod.JudgeVerdicts(), &n); err != nil {
		return nil, err
	}
	return &n, nil
}
