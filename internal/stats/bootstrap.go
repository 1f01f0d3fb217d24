package stats

import (
	"fmt"
	"math"
	"slices"
)

// DefaultBootstrapResamples is the bootstrap's resamples when left at zero. The Monte Carlo error of a 95%
// percentile endpoint is about 2.7/sqrt(B) standard errors of the mean: 0.06 of one at B = 2000, which moves a
// printed interval by less than its last digit in practice, at a cost linear in cases times B (BenchmarkBootstrap).
const DefaultBootstrapResamples = 2000

// BootstrapOptions tune BootstrapMean. The zero value is the default.
type BootstrapOptions struct {
	// Seed seeds the resampling; the same values and seed give the same interval.
	Seed uint64
	// Resamples is the number of bootstrap samples (0: DefaultBootstrapResamples).
	Resamples int
	// Level is the confidence level (0: 95%).
	Level float64
}

// BootstrapMean returns the mean of values with its percentile bootstrap interval: Resamples times, len(values)
// values are drawn with replacement and averaged, and the interval is the (1-level)/2 and (1+level)/2 quantiles
// of those means (linear interpolation between order statistics, numpy's default percentile).
//
// Each value is one case: given per-case means over trials (pass rates, mean scores) the resampling is of whole
// cases, so the interval is clustered by case and trials of one case are never treated as independent. Given
// per-case differences current - baseline it is the paired bootstrap interval of the mean difference.
func BootstrapMean(values []float64, opts BootstrapOptions) (Interval, error) {
	level, err := levelOrDefault(opts.Level)
	if err != nil {
		return Interval{}, fmt.Errorf("bootstrap: %w", err)
	}
	resamples := opts.Resamples
	if resamples == 0 {
		resamples = DefaultBootstrapResamples
	}
	n := len(values)
	switch {
	case resamples < 0:
		return Interval{}, fmt.Errorf("bootstrap: %d resamples; want a positive number (0 for %d)", resamples, DefaultBootstrapResamples)
	case n == 0:
		return Interval{}, fmt.Errorf("bootstrap: no values")
	case uint64(n) > math.MaxUint32:
		return Interval{}, fmt.Errorf("bootstrap: %d values; at most %d", n, uint32(math.MaxUint32))
	}
	if err := checkFinite(values); err != nil {
		return Interval{}, fmt.Errorf("bootstrap: %w", err)
	}
	mean := meanOf(values)
	d := newDraws(opts.Seed, streamBootstrap)
	means := make([]float64, resamples)
	n32 := uint32(n)
	// reject is Lemire's threshold: a 32-bit draw whose product with n has a low half below it is drawn again.
	reject := -n32 % n32
	for r := range means {
		// Two indexes per random word, written out here (the hot loop); two sums, so the additions do not wait on
		// each other.
		var s0, s1 float64
		i := 0
		for ; i+1 < n; i += 2 {
			w := d.uint64()
			m0 := (w & 0xffffffff) * uint64(n)
			m1 := (w >> 32) * uint64(n)
			if uint32(m0) < reject {
				m0 = uint64(d.index(n32)) << 32
			}
			if uint32(m1) < reject {
				m1 = uint64(d.index(n32)) << 32
			}
			s0 += values[m0>>32]
			s1 += values[m1>>32]
		}
		if i < n {
			s0 += values[d.index(n32)]
		}
		means[r] = (s0 + s1) / float64(n)
	}
	slices.Sort(means)
	return Interval{
		Estimate: mean,
		Low:      quantileSorted(means, (1-level)/2),
		High:     quantileSorted(means, (1+level)/2),
		Level:    level,
	}, nil
}

// PairedBootstrap returns the mean of current[i] - baseline[i] with its paired bootstrap interval (BootstrapMean
// of the differences): cases are resampled, each keeping its baseline and current value together.
func PairedBootstrap(baseline, current []float64, opts BootstrapOptions) (Interval, error) {
	if len(baseline) != len(current) {
		return Interval{}, fmt.Errorf("paired bootstrap: %d baseline values and %d current values; pairs need as many of each", len(baseline), len(current))
	}
	diffs := make([]float64, len(current))
	for i := range current {
		diffs[i] = current[i] - baseline[i]
	}
	return BootstrapMean(diffs, opts)
}

// quantileSorted returns the q-quantile of sorted values by linear interpolation between order statistics
// (Hyndman and Fan's type 7, numpy's default).
func quantileSorted(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
