package podwire

import "slices"

// A run with trials (spec.trials.count above 1) answers every case N times, each trial of each shard in its own
// pod: the Indexed Job has shards × N completions, and completion index i is trial t of shard s where
// i = t·shards + s, t counted from 0 (trial-major: with fewer pods at once than indexes, the Job starts every
// shard's first trial before any second). Users see trials counted from 1. These two functions are the one
// mapping; the launcher (through RunnerConfig), the collector and the manager all use them.

// PodIndex is the Job completion index of trial (from 1) of shard (from 0) in a run of shards shards.
func PodIndex(shard, trial, shards int) int {
	return (max(trial, 1)-1)*max(shards, 1) + shard
}

// ShardTrial is the shard (from 0) and the trial (from 1) whose pod has Job completion index index in a run of
// shards shards.
func ShardTrial(index, shards int) (shard, trial int) {
	shards = max(shards, 1)
	return index % shards, index/shards + 1
}

// TrialCount is the number of trials of a run whose run.json says trials (0 in a run.json of one trial).
func TrialCount(trials int32) int { return max(int(trials), 1) }

// CaseSpan is a half-open span [lo, hi) of indexes into a run's CaseIDs (RunConfig.TrialRuns).
type CaseSpan [2]int32

// validTrialRuns reports whether runs holds one list per trial of ascending, disjoint, non-empty spans within n
// cases (a trial's list may be empty: it runs nothing).
func validTrialRuns(runs [][]CaseSpan, trials, n int) bool {
	if len(runs) != trials {
		return false
	}
	for _, spans := range runs {
		end := int32(0)
		for _, s := range spans {
			if s[0] < end || s[0] >= s[1] || int(s[1]) > n {
				return false
			}
			end = s[1]
		}
	}
	return true
}

// spanIndexes are the indexes in [lo, hi) that spans cover, ascending (an empty, non-nil slice when none is).
func spanIndexes(spans []CaseSpan, lo, hi int) []int {
	out := []int{}
	for _, s := range spans {
		for j := max(int(s[0]), lo); j < min(int(s[1]), hi); j++ {
			out = append(out, j)
		}
	}
	return out
}

// RunsInTrial reports whether trial (from 1) of the run runs the case at index among its CaseIDs: always, unless
// TrialRuns says otherwise (a resumed run's case whose trial was carried).
func (c *RunConfig) RunsInTrial(index, trial int) bool {
	if len(c.TrialRuns) < trial || trial < 1 {
		return len(c.TrialRuns) == 0
	}
	spans := c.TrialRuns[trial-1]
	k, _ := slices.BinarySearchFunc(spans, index, func(s CaseSpan, i int) int {
		switch {
		case int(s[1]) <= i:
			return -1
		case int(s[0]) > i:
			return 1
		}
		return 0
	})
	return k < len(spans) && int(spans[k][0]) <= index && index < int(spans[k][1])
}

// SpansOf are the ascending spans covering exactly the indexes i in [0, n) for which runs(i) is true: TrialRuns'
// form of one trial's cases.
func SpansOf(n int, runs func(index int) bool) []CaseSpan {
	var out []CaseSpan
	for i := 0; i < n; i++ {
		if !runs(i) {
			continue
		}
		j := i + 1
		for j < n && runs(j) {
			j++
		}
		out = append(out, CaseSpan{int32(i), int32(j)})
		i = j
	}
	return out
}
