package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchDiffs returns n per-case differences: pass-rate differences over 5 trials (ties: at most 5 magnitudes) or
// continuous score differences (every magnitude distinct, the sign-flip test's worst case).
func benchDiffs(n int, scores bool) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	d := make([]float64, n)
	for i := range d {
		if scores {
			d[i] = r.NormFloat64() * 0.15
			continue
		}
		var base, cur int
		for range 5 {
			if r.Float64() < 0.8 {
				base++
			}
			if r.Float64() < 0.78 {
				cur++
			}
		}
		d[i] = float64(cur-base) / 5
	}
	return d
}

// BenchmarkSignFlip: the Monte Carlo sign-flip test (10,000 resamples; both sizes are beyond the exact bound) on
// pass-rate differences with 5 trials and on continuous scores.
func BenchmarkSignFlip(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		for _, scores := range []bool{false, true} {
			kind := "passrate"
			if scores {
				kind = "scores"
			}
			diffs := benchDiffs(n, scores)
			b.Run(fmt.Sprintf("%s/cases=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := SignFlip(diffs, SignFlipOptions{Seed: 7})
					if err != nil || res.Exact {
						b.Fatalf("SignFlip: %+v, %v", res, err)
					}
				}
			})
		}
	}
}

// BenchmarkSignFlipExact: the exact enumeration at its bound, 20 distinct magnitudes (2^20 patterns).
func BenchmarkSignFlipExact(b *testing.B) {
	diffs := benchDiffs(20, true)
	b.ReportAllocs()
	for b.Loop() {
		res, err := SignFlip(diffs, SignFlipOptions{})
		if err != nil || !res.Exact {
			b.Fatalf("SignFlip: %+v, %v", res, err)
		}
	}
}

// BenchmarkBootstrap: the percentile bootstrap of the mean difference (2,000 resamples).
func BenchmarkBootstrap(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		diffs := benchDiffs(n, true)
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := BootstrapMean(diffs, BootstrapOptions{Seed: 7}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPaired: the whole comparison the manager makes at 100,000 cases with 3 trials (pairing by id, the
// sign-flip test on pass rates, the bootstrap interval of the effect).
func BenchmarkPaired(b *testing.B) {
	const n = 100_000
	r := rand.New(rand.NewPCG(3, 4))
	base := make([]Case, n)
	cur := make([]Case, n)
	for i := range base {
		id := fmt.Sprintf("case-%06d", i)
		base[i] = Case{ID: id, Passed: r.IntN(4), Trials: 3}
		cur[i] = Case{ID: id, Passed: r.IntN(4), Trials: 3}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Paired(base, cur, PairedOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
