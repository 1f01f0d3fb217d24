// Package stats answers "did it really get worse?" for eval runs whose agents are stochastic. It holds the
// statistics behind repeated trials and the Paired baseline comparison (issue 40, docs/statistics.md):
//
//   - per case with N trials: pass@k and pass^k (passk.go), flaky cases;
//   - per run: the pass rate over case verdicts with its Wilson interval, the mean trial pass rate and the mean
//     score with intervals clustered by case, the means of pass@N and pass^N (Summarize, aggregate.go);
//   - intervals: Wilson's score interval for a proportion, Student's t interval of a mean, the percentile bootstrap
//     of a mean (interval.go, bootstrap.go);
//   - tests: McNemar's exact test on discordant pairs (mcnemar.go), the sign-flip (paired permutation) test on
//     per-case differences, exact up to 2^20 sign patterns and seeded Monte Carlo beyond (signflip.go);
//   - Paired (paired.go): a run against its baseline, paired by case id, with the test, the effect and its
//     interval, the p-value, Regressed and one sentence for people.
//
// Every result is a function of its inputs and a seed: the Monte Carlo and bootstrap draws come from our own
// SplitMix64 (rng.go), whose stream for a seed never changes, so a comparison gives the same numbers on every
// reconcile and release. The numbers are checked against scipy and statsmodels (testdata/reference.py writes
// testdata/reference.json, which reference_test.go reads).
// Pure: no I/O, no API client; callers bring the per-case counts however they were stored.
package stats
