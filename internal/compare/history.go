package compare

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/results"
	"github.com/evalrun-operator/evalrun-operator/internal/verdict"
)

// A schedule's case history: per case, the verdicts of the schedule's last HistoryRuns recorded runs, one character
// each, oldest first. It is what finds the cases whose verdict flips from night to night (Flakiest) and what
// spec.baseline.quarantine leaves out of the regression test (Quarantined).
const (
	// HistoryRuns (K) is how many recorded runs the history keeps per case.
	HistoryRuns = 30
	// HistoryBudget bounds the encoded history (gzip'd JSON), under a ConfigMap's 1 MiB.
	HistoryBudget = 900 << 10
	// MinQuarantineRuns is how many verdicts (Skipped and absent runs left out) a case needs before it can be
	// quarantined: a case seen twice, passing then failing, has changed once, not flipped back and forth.
	MinQuarantineRuns = 3
	// maxHistoryID bounds a case id kept in the history (the API's case id bound).
	maxHistoryID = 256
	// historyFormat versions the encoding.
	historyFormat = 1
)

// The characters of a case's verdict in one recorded run.
const (
	HistoryPass    = 'P'
	HistoryFail    = 'F'
	HistoryError   = 'E'
	HistoryMissing = 'M'
	HistorySkipped = 'S'
	// HistoryAbsent marks a recorded run that did not have the case (not in its eval file).
	HistoryAbsent = '-'
)

// HistoryVerdict is the character of a case's verdict in one run: its verdict over its trials, M when the runner
// gave no record (of any trial).
func HistoryVerdict(c *Case) byte {
	switch {
	case c.Missing:
		return HistoryMissing
	case c.Verdict == verdict.VerdictPass:
		return HistoryPass
	case c.Verdict == verdict.VerdictFail:
		return HistoryFail
	case c.Verdict == verdict.VerdictSkipped:
		return HistorySkipped
	default:
		return HistoryError
	}
}

// History is a schedule's case history. Runs are the uids of the recorded runs, oldest first (at most
// HistoryRuns); every case's verdicts have one character per recorded run, aligned with Runs (HistoryAbsent
// where a run did not have it).
type History struct {
	// Through is the scheduled time of the latest recorded run: a run scheduled at or before it is not recorded
	// again (with Runs, what makes recording idempotent once a run's uid has aged out of Runs).
	Through time.Time `json:"through,omitzero"`
	Runs    []string  `json:"runs,omitempty"`
	// Cases maps a case id to its verdicts.
	Cases map[string]string `json:"cases,omitempty"`
	// Dropped counts the cases the latest recording left out to keep the history under its budget.
	Dropped int `json:"dropped,omitempty"`
}

// encoded is the stored form: History with its format.
type encoded struct {
	Format int `json:"format"`
	History
}

// Recorded reports whether the run with uid, scheduled at t, is in the history already (or older than its
// latest recorded run).
func (h *History) Recorded(uid string, t time.Time) bool {
	return slices.Contains(h.Runs, uid) || (!h.Through.IsZero() && !t.After(h.Through))
}

// Record adds a run's case verdicts (id to HistoryVerdict) to the history, keeping the last HistoryRuns runs,
// unless the run is recorded already (then it returns false). Cases no kept run had are forgotten. The encoded
// history must then fit the budget: see Encode.
func (h *History) Record(uid string, t time.Time, verdicts map[string]byte) bool {
	if h.Recorded(uid, t) {
		return false
	}
	if h.Cases == nil {
		h.Cases = map[string]string{}
	}
	n := len(h.Runs)
	h.Runs = append(h.Runs, uid)
	h.Through = t.UTC()
	for id, v := range h.Cases {
		h.Cases[id] = v + string(HistoryAbsent)
	}
	for id, v := range verdicts {
		if len(id) > maxHistoryID {
			continue
		}
		old, ok := h.Cases[id]
		if !ok {
			old = strings.Repeat(string(HistoryAbsent), n+1)
		}
		h.Cases[id] = old[:len(old)-1] + string(v)
	}
	if cut := len(h.Runs) - HistoryRuns; cut > 0 {
		h.Runs = h.Runs[cut:]
		for id, v := range h.Cases {
			h.Cases[id] = v[cut:]
		}
	}
	for id, v := range h.Cases {
		if strings.Trim(v, string(HistoryAbsent)) == "" {
			delete(h.Cases, id)
		}
	}
	return true
}

// Before is the history as it was before the run with uid was recorded (the history itself when it is not in
// it): a run's own verdicts are not evidence of its cases' flakiness.
func (h *History) Before(uid string) *History {
	i := slices.Index(h.Runs, uid)
	if i < 0 {
		return h
	}
	out := &History{Runs: h.Runs[:i], Cases: make(map[string]string, len(h.Cases))}
	for id, v := range h.Cases {
		out.Cases[id] = v[:i]
	}
	return out
}

// Encode encodes the history as gzip'd JSON within budget bytes. Cases that do not fit are dropped, those new to
// the history (one verdict) first, then by id from the end, and counted in Dropped; the history is changed to
// what was kept.
func (h *History) Encode(budget int) ([]byte, error) {
	data, err := h.encode()
	if err != nil || len(data) <= budget {
		return data, err
	}
	ids := make([]string, 0, len(h.Cases))
	for id := range h.Cases {
		ids = append(ids, id)
	}
	fresh := func(id string) bool { return strings.Count(h.Cases[id], string(HistoryAbsent)) >= len(h.Runs)-1 }
	slices.SortFunc(ids, func(a, b string) int {
		if fa, fb := fresh(a), fresh(b); fa != fb {
			if fa {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	all := h.Cases
	keep := func(n int) *History {
		k := &History{Through: h.Through, Runs: h.Runs, Cases: make(map[string]string, n), Dropped: h.Dropped + len(ids) - n}
		for _, id := range ids[:n] {
			k.Cases[id] = all[id]
		}
		return k
	}
	// The largest prefix of ids that fits: the encoded size grows with it.
	lo, hi := 0, len(ids)
	var best []byte
	for lo < hi {
		mid := (lo + hi + 1) / 2
		d, err := keep(mid).encode()
		if err != nil {
			return nil, err
		}
		if len(d) <= budget {
			lo, best = mid, d
		} else {
			hi = mid - 1
		}
	}
	*h = *keep(lo)
	if best == nil {
		if best, err = h.encode(); err != nil || len(best) > budget {
			return nil, errors.Join(err, fmt.Errorf("the history of %d runs does not fit %d bytes even without cases", len(h.Runs), budget))
		}
	}
	return best, nil
}

func (h *History) encode() ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(encoded{Format: historyFormat, History: *h}); err != nil {
		return nil, fmt.Errorf("encoding the case history: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing the case history: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeHistory reads an encoded history (empty data: an empty history). It refuses one whose verdicts are not
// aligned with its runs or hold unknown characters, so a hand-edited ConfigMap cannot make Record misbehave.
func DecodeHistory(data []byte) (*History, error) {
	h := &History{}
	if len(data) == 0 {
		return h, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the case history is not gzip'd: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("decompressing the case history: %w", err)
	}
	var e encoded
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("the case history is not valid JSON: %w", err)
	}
	if e.Format != historyFormat {
		return nil, fmt.Errorf("the case history has format %d, want %d", e.Format, historyFormat)
	}
	if len(e.Runs) > HistoryRuns {
		return nil, fmt.Errorf("the case history has %d runs, more than %d", len(e.Runs), HistoryRuns)
	}
	for id, v := range e.Cases {
		if len(v) != len(e.Runs) || strings.Trim(v, "PFEMS-") != "" {
			return nil, fmt.Errorf("case %q has verdicts %q: want %d of P, F, E, M, S, -", id, v, len(e.Runs))
		}
	}
	return &e.History, nil
}

// Flips counts how often a case's verdict flipped between passing (P) and not passing (F, E, M) over its
// verdicts, Skipped and absent runs left out, and how many verdicts that counted (runs).
func Flips(verdicts string) (flips, runs int) {
	var last byte
	for i := range len(verdicts) {
		v := verdicts[i]
		if v == HistorySkipped || v == HistoryAbsent {
			continue
		}
		runs++
		pass := v == HistoryPass
		if last != 0 && pass != (last == HistoryPass) {
			flips++
		}
		last = v
	}
	return flips, runs
}

// FlipRate is flips over the changes a case could have made (runs - 1): 1 for a case that flipped every night,
// 0 for one with fewer than two verdicts.
func FlipRate(flips, runs int) *big.Rat {
	if runs < 2 {
		return new(big.Rat)
	}
	return big.NewRat(int64(flips), int64(runs-1))
}

// Flaky is one case of Flakiest.
type Flaky struct {
	ID          string
	Flips, Runs int
	Rate        *big.Rat
}

// Flakiest is the n cases that flipped most often, by flips, then flip rate, then id; cases that never flipped
// are left out.
func (h *History) Flakiest(n int) []Flaky {
	var out []Flaky
	for id, v := range h.Cases {
		if f, r := Flips(v); f > 0 {
			out = append(out, Flaky{ID: id, Flips: f, Runs: r, Rate: FlipRate(f, r)})
		}
	}
	slices.SortFunc(out, func(a, b Flaky) int {
		if a.Flips != b.Flips {
			return b.Flips - a.Flips
		}
		if c := b.Rate.Cmp(a.Rate); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(n, len(out))]
}

// Quarantined is the set of cases whose flip rate is above over, among those with at least MinQuarantineRuns
// verdicts.
func (h *History) Quarantined(over *big.Rat) map[string]bool {
	out := map[string]bool{}
	for id, v := range h.Cases {
		if f, r := Flips(v); r >= MinQuarantineRuns && FlipRate(f, r).Cmp(over) > 0 {
			out[id] = true
		}
	}
	return out
}

// Verdicts collects a run's case verdicts (HistoryVerdict) from its stored result lines, each case decided over its
// trials by the run's rule (TrialRuleOf) as the comparison decides it; a repeated id keeps its first line.
type Verdicts struct {
	groups *lineGroups
	out    map[string]byte
}

// NewVerdicts returns a collector for a run whose cases are decided by rule.
func NewVerdicts(rule results.TrialRule) *Verdicts {
	v := &Verdicts{out: map[string]byte{}}
	if rule.N() > 1 {
		v.groups = &lineGroups{rule: rule, index: map[string]int{}}
	}
	return v
}

// Add adds one stored result line.
func (v *Verdicts) Add(l *results.Line) {
	if v.groups != nil {
		v.groups.add(l)
		return
	}
	if _, dup := v.out[l.ID]; !dup {
		c := CaseOf(l)
		v.out[l.ID] = HistoryVerdict(&c)
	}
}

// Finish returns the verdicts by case id.
func (v *Verdicts) Finish() map[string]byte {
	if v.groups != nil {
		v.groups.each(func(c Case) { v.out[c.ID] = HistoryVerdict(&c) })
	}
	return v.out
}
