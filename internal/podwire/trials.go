package podwire

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
