package stats

import (
	"fmt"
	"math"
	"slices"
)

// DefaultExactPatterns bounds the sign-flip test's exact enumeration: up to 2^20 (about a million) classes of sign
// patterns. With distinct |differences| that is n <= 20 nonzero differences, every one of the 2^n patterns; with
// tied |differences| (pass-rate differences with N trials take at most N magnitudes) the patterns are counted by
// how many of each magnitude are flipped, (k_1+1)(k_2+1)... classes weighted by binomial coefficients, so 50
// cases with 5 trials are usually exact too. A million classes take about 10 ms and a few kilobytes
// (BenchmarkSignFlipExact), about what the Monte Carlo test costs at 1,000 cases; beyond, the Monte Carlo
// p-value's standard error (0.0022 at p = 0.05) is small next to alpha, and its cost grows only linearly.
const DefaultExactPatterns = 1 << 20

// DefaultResamples is the sign-flip test's Monte Carlo draws when the exact enumeration is too large: the
// p-value's standard error is sqrt(p(1-p)/10000), 0.0022 at p = 0.05.
const DefaultResamples = 10_000

// SignFlipOptions tune SignFlip. The zero value is the default.
type SignFlipOptions struct {
	// Seed seeds the Monte Carlo draws; the same differences and seed give the same p-values.
	Seed uint64
	// Resamples is the number of Monte Carlo sign patterns (0: DefaultResamples).
	Resamples int
	// ExactPatterns bounds the exact enumeration (0: DefaultExactPatterns; negative: always Monte Carlo).
	ExactPatterns int
}

// SignFlipResult is a sign-flip test of per-case differences (current - baseline).
type SignFlipResult struct {
	// Mean is the mean difference over every case, zeros included: the test's statistic (divided by n).
	Mean float64
	// Cases counts the differences; NonZero those that are not zero (a zero is the same under either sign and
	// changes no p-value).
	Cases, NonZero int
	// Exact: the p-values count every sign pattern; otherwise Resamples random patterns were drawn.
	Exact     bool
	Resamples int
	// Less is the one-sided p-value for "current is lower than baseline" (a drop): the share of sign patterns
	// whose sum is at most the observed sum. This is the side Regressed uses.
	Less float64
	// TwoSided is min(1, 2 · min(Less, Greater)), as scipy's permutation_test computes it; the null distribution
	// is symmetric, so it is also the share of patterns whose |sum| is at least the observed |sum|.
	TwoSided float64
	// MCError is the Monte Carlo standard error of Less, sqrt(Less(1-Less)/Resamples); 0 when exact.
	MCError float64
}

// signGroup is the nonzero differences of one magnitude: count of them, negative of them negative.
type signGroup struct {
	mag             float64
	count, negative int
}

// SignFlip tests whether the mean of paired per-case differences d_i = current_i - baseline_i is below zero, by
// the sign-flip (paired permutation) test: if neither run is better, each case's difference is as likely to have
// either sign, so the observed sum is compared with the sums of all 2^n sign patterns ±|d_i| (the exact test,
// while the pattern classes fit opts.ExactPatterns) or of opts.Resamples seeded random ones (Monte Carlo, with
// p = (hits + 1)/(resamples + 1) as scipy's permutation_test computes it, never 0).
//
// Sums that differ by less than (n+1)·1e-14 of the sum of |d_i| count as equal (ties), so sums that are equal on
// paper but rounded differently (0.2 + 0.4 and 0.6) are ties. Differences must be finite.
func SignFlip(diffs []float64, opts SignFlipOptions) (SignFlipResult, error) {
	if len(diffs) == 0 {
		return SignFlipResult{}, fmt.Errorf("sign-flip test: no differences")
	}
	if err := checkFinite(diffs); err != nil {
		return SignFlipResult{}, fmt.Errorf("sign-flip test: %w", err)
	}
	resamples := opts.Resamples
	if resamples == 0 {
		resamples = DefaultResamples
	}
	if resamples < 0 {
		return SignFlipResult{}, fmt.Errorf("sign-flip test: %d resamples; want a positive number (0 for %d)", resamples, DefaultResamples)
	}
	exactPatterns := opts.ExactPatterns
	if exactPatterns == 0 {
		exactPatterns = DefaultExactPatterns
	}

	groups, nonzero := signGroups(diffs)
	res := SignFlipResult{Mean: meanOf(diffs), Cases: len(diffs), NonZero: nonzero}
	if nonzero == 0 {
		res.Exact, res.Less, res.TwoSided = true, 1, 1
		return res, nil
	}
	var observed, total float64
	for _, g := range groups {
		observed += g.mag * float64(g.count-2*g.negative)
		total += g.mag * float64(g.count)
	}
	tol := float64(nonzero+1) * 1e-14 * total

	var less, greater float64
	if fitsExact(groups, exactPatterns) {
		res.Exact = true
		less, greater = exactTails(groups, observed, tol)
	} else {
		res.Resamples = resamples
		less, greater = monteCarloTails(groups, observed, tol, resamples, opts.Seed)
	}
	res.Less = math.Min(less, 1)
	res.TwoSided = math.Min(1, 2*math.Min(less, greater))
	if !res.Exact {
		res.MCError = math.Sqrt(res.Less * (1 - res.Less) / float64(resamples))
	}
	return res, nil
}

// signGroups sorts the nonzero differences by magnitude and groups equal magnitudes.
func signGroups(diffs []float64) ([]signGroup, int) {
	mags := make([]float64, 0, len(diffs))
	for _, d := range diffs {
		if d != 0 {
			mags = append(mags, d)
		}
	}
	// Sort by magnitude, negatives first within a magnitude.
	slices.SortFunc(mags, func(a, b float64) int {
		if c := compareFloat(math.Abs(a), math.Abs(b)); c != 0 {
			return c
		}
		return compareFloat(a, b)
	})
	groups := make([]signGroup, 0, len(mags))
	for _, d := range mags {
		m := math.Abs(d)
		if len(groups) == 0 || groups[len(groups)-1].mag != m {
			groups = append(groups, signGroup{mag: m})
		}
		g := &groups[len(groups)-1]
		g.count++
		if d < 0 {
			g.negative++
		}
	}
	return groups, len(mags)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fitsExact reports whether the pattern classes, the product of (count+1) over the groups, are at most limit.
func fitsExact(groups []signGroup, limit int) bool {
	if limit < 0 {
		return false
	}
	classes := 1
	for _, g := range groups {
		if classes > limit/(g.count+1) {
			return false
		}
		classes *= g.count + 1
	}
	return true
}

// exactTails returns P(S <= observed) and P(S >= observed) over every sign pattern: group g contributes
// mag·(count - 2j) when j of its differences are negative, which count!/(j!(count-j)!) of its 2^count patterns do.
func exactTails(groups []signGroup, observed, tol float64) (less, greater float64) {
	pmfs := make([][]float64, len(groups))
	for i, g := range groups {
		pmfs[i] = binomialHalfPMF(g.count)
	}
	var walk func(i int, sum, weight float64)
	walk = func(i int, sum, weight float64) {
		g := groups[i]
		pmf := pmfs[i]
		if i == len(groups)-1 {
			for j, p := range pmf {
				s := sum + g.mag*float64(g.count-2*j)
				if s <= observed+tol {
					less += weight * p
				}
				if s >= observed-tol {
					greater += weight * p
				}
			}
			return
		}
		for j, p := range pmf {
			walk(i+1, sum+g.mag*float64(g.count-2*j), weight*p)
		}
	}
	walk(0, 0, 1)
	return less, greater
}

// monteCarloTails estimates P(S <= observed) and P(S >= observed) from resamples seeded random sign patterns. A
// pattern's sum is total - 2·(the magnitudes whose sign is negative): in a group of tied magnitudes the number of
// negative signs is the number of set bits among count random bits; the groups of one magnitude each (every group,
// for continuous scores) are summed four at a time, from a table of the 16 subsets of each four, one table entry
// per four random bits.
func monteCarloTails(groups []signGroup, observed, tol float64, resamples int, seed uint64) (less, greater float64) {
	singles := make([]float64, 0, len(groups))
	var tied []signGroup
	var total float64
	for _, g := range groups {
		total += g.mag * float64(g.count)
		if g.count == 1 {
			singles = append(singles, g.mag)
		} else {
			tied = append(tied, g)
		}
	}
	chunks := (len(singles) + 3) / 4
	// table[16c+m] is the sum of the singles 4c+j whose bit j of m is set.
	table := make([]float64, 16*chunks)
	for i, a := range singles {
		c, bit := i/4, 1<<(i%4)
		for m := bit; m < 16; m++ {
			if m&bit != 0 {
				table[16*c+m] += a
			}
		}
	}
	d := newDraws(seed, streamSignFlip)
	var nLess, nGreater int
	for range resamples {
		var n0, n1, n2, n3 float64
		c := 0
		// Sixteen chunks per random word; four sums, so the additions do not wait on each other.
		for ; c+16 <= chunks; c += 16 {
			w := d.uint64()
			t := table[16*c : 16*c+256]
			for k := 0; k < 256; k += 64 {
				n0 += t[k+int(w&15)]
				n1 += t[k+16+int(w>>4&15)]
				n2 += t[k+32+int(w>>8&15)]
				n3 += t[k+48+int(w>>12&15)]
				w >>= 16
			}
		}
		if c < chunks {
			w := d.uint64()
			for ; c < chunks; c++ {
				n0 += table[16*c+int(w&15)]
				w >>= 4
			}
		}
		negative := (n0 + n1) + (n2 + n3)
		for _, g := range tied {
			negative += g.mag * float64(d.ones(g.count))
		}
		s := total - 2*negative
		if s <= observed+tol {
			nLess++
		}
		if s >= observed-tol {
			nGreater++
		}
	}
	r := float64(resamples)
	return (float64(nLess) + 1) / (r + 1), (float64(nGreater) + 1) / (r + 1)
}
