package stats

import (
	"fmt"
	"math"
)

// DefaultLevel is the confidence level an option left at zero means: 95%.
const DefaultLevel = 0.95

// Interval is a point estimate with a two-sided confidence interval at Level (0.95 for 95%).
type Interval struct {
	Estimate  float64
	Low, High float64
	Level     float64
}

// levelOrDefault returns the level a caller asked for, DefaultLevel for 0, or an error outside (0, 1).
func levelOrDefault(level float64) (float64, error) {
	if level == 0 {
		return DefaultLevel, nil
	}
	if !(level > 0 && level < 1) {
		return 0, fmt.Errorf("confidence level %v must lie strictly between 0 and 1 (0.95 for 95%%)", level)
	}
	return level, nil
}

// Wilson returns the Wilson score interval of a proportion: successes out of n, at the confidence level (0 means
// 95%). The estimate is successes/n. It is the interval statsmodels' proportion_confint(method="wilson") gives,
// and unlike the normal ("Wald") interval it stays inside [0, 1] and keeps its coverage at 0 or n successes.
func Wilson(successes, n int, level float64) (Interval, error) {
	level, err := levelOrDefault(level)
	if err != nil {
		return Interval{}, err
	}
	if n <= 0 || successes < 0 || successes > n {
		return Interval{}, fmt.Errorf("wilson interval: %d successes out of %d: want 0 <= successes <= n and n >= 1", successes, n)
	}
	z := normalQuantileUpper((1 - level) / 2)
	nf := float64(n)
	p := float64(successes) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return Interval{Estimate: p, Low: center - half, High: center + half, Level: level}, nil
}

// TInterval returns the mean of values with Student's t interval at the confidence level (0 means 95%): mean ±
// t(1 - (1-level)/2, n-1) · s/√n, with s the sample standard deviation (scipy's
// t.interval(level, n-1, loc=mean, scale=sem)). It needs two values or more; values that are all equal give an
// interval of width 0.
func TInterval(values []float64, level float64) (Interval, error) {
	level, err := levelOrDefault(level)
	if err != nil {
		return Interval{}, err
	}
	n := len(values)
	if n < 2 {
		return Interval{}, fmt.Errorf("t interval: %d values; it needs at least 2", n)
	}
	mean, sd, err := meanSD(values)
	if err != nil {
		return Interval{}, err
	}
	t, err := tQuantileUpper((1-level)/2, float64(n-1))
	if err != nil {
		return Interval{}, err
	}
	half := t * sd / math.Sqrt(float64(n))
	return Interval{Estimate: mean, Low: mean - half, High: mean + half, Level: level}, nil
}

// meanSD returns the mean and the sample standard deviation (n - 1 in the denominator) of at least two finite
// values, in two passes (the second on the deviations, so large means lose no precision).
func meanSD(values []float64) (mean, sd float64, err error) {
	if err := checkFinite(values); err != nil {
		return 0, 0, err
	}
	mean = meanOf(values)
	var ss, comp float64
	for _, v := range values {
		d := v - mean
		ss += d * d
		comp += d
	}
	n := float64(len(values))
	// The corrected two-pass formula: the second term removes the mean's own rounding.
	ss -= comp * comp / n
	return mean, math.Sqrt(math.Max(ss, 0) / (n - 1)), nil
}

// meanOf returns the mean of values (0 for none).
func meanOf(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	var sum float64
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// checkFinite reports the first value that is NaN or infinite.
func checkFinite(values []float64) error {
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("value %d is %v; every value must be finite", i, v)
		}
	}
	return nil
}
