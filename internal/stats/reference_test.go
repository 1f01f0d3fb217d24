package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// reference is testdata/reference.json, written by testdata/reference.py from scipy and statsmodels (Debian's
// python3-scipy 1.10 and python3-statsmodels 0.13). The test reads the JSON only; python is needed to regenerate it.
type reference struct {
	Versions map[string]string `json:"versions"`
	Wilson   []struct {
		Successes, N     int
		Level, Low, High float64
	} `json:"wilson"`
	McNemar []struct {
		PassToFail int     `json:"pass_to_fail"`
		FailToPass int     `json:"fail_to_pass"`
		TwoSided   float64 `json:"two_sided"`
		Worse      float64 `json:"worse"`
		// ExactTwoSided and ExactWorse are exact sums of binomial coefficients (python integers).
		ExactTwoSided float64 `json:"exact_two_sided"`
		ExactWorse    float64 `json:"exact_worse"`
	} `json:"mcnemar"`
	BetaInc []struct {
		A, B, X, Value float64
		// Exact is set for whole a, b and x = 1/2: a binomial tail summed in python integers.
		Exact *float64
	} `json:"betainc"`
	TQuantile []struct {
		Q, DF, Value float64
		ScipyISF     float64 `json:"scipy_isf"`
	} `json:"t_quantile"`
	TInterval []struct {
		Name                   string
		Values                 []float64
		Level, Mean, Low, High float64
		HalfWidth              float64 `json:"half_width"`
	} `json:"t_interval"`
	PassK []struct {
		N, C, K  int
		PassAtK  float64 `json:"pass_at_k"`
		PassHatK float64 `json:"pass_hat_k"`
	} `json:"pass_k"`
	SignFlip []struct {
		Name              string
		Baseline, Current []float64
		Less              float64
		TwoSided          float64 `json:"two_sided"`
		Method            string
	} `json:"sign_flip"`
	Bootstrap []struct {
		Name          string
		Values        []float64
		Level         float64
		Resamples     int
		Low, High     float64
		StandardError float64 `json:"standard_error"`
	} `json:"bootstrap"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("testdata/reference.json: %v", err)
	}
	if len(ref.Wilson) == 0 || len(ref.McNemar) == 0 || len(ref.SignFlip) == 0 || len(ref.Bootstrap) == 0 {
		t.Fatal("testdata/reference.json lacks a section; regenerate it with testdata/reference.py")
	}
	return ref
}

// near reports whether got equals want to a relative rel (or an absolute 1e-15, for values at 0).
func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)+1e-15
}

// sumRel is the precision our McNemar p-values and incomplete beta function must match exact sums of binomial
// coefficients to, up to 10^5 trials (scipy's own drift there by 1e-10; ours by 1e-15 or so).
const sumRel = 1e-12

// exactRel is the precision the closed-form and exact results must match the reference to: scipy's and ours
// differ only in rounding (the incomplete beta function's continued fraction, log-gamma).
const exactRel = 1e-9

func TestReferenceWilson(t *testing.T) {
	for _, r := range loadReference(t).Wilson {
		got, err := Wilson(r.Successes, r.N, r.Level)
		if err != nil {
			t.Errorf("Wilson(%d, %d, %v): %v", r.Successes, r.N, r.Level, err)
			continue
		}
		if !near(got.Low, r.Low, exactRel) || !near(got.High, r.High, exactRel) {
			t.Errorf("Wilson(%d, %d, %v) = [%.17g, %.17g]; statsmodels [%.17g, %.17g]", r.Successes, r.N, r.Level, got.Low, got.High, r.Low, r.High)
		}
	}
}

func TestReferenceMcNemar(t *testing.T) {
	for _, r := range loadReference(t).McNemar {
		got, err := McNemar(r.PassToFail, r.FailToPass)
		if err != nil {
			t.Errorf("McNemar(%d, %d): %v", r.PassToFail, r.FailToPass, err)
			continue
		}
		if !near(got.TwoSided, r.TwoSided, exactRel) {
			t.Errorf("McNemar(%d, %d) two-sided = %.17g; statsmodels %.17g", r.PassToFail, r.FailToPass, got.TwoSided, r.TwoSided)
		}
		if !near(got.Worse, r.Worse, exactRel) {
			t.Errorf("McNemar(%d, %d) worse = %.17g; scipy binomtest %.17g", r.PassToFail, r.FailToPass, got.Worse, r.Worse)
		}
		if !near(got.TwoSided, r.ExactTwoSided, sumRel) || !near(got.Worse, r.ExactWorse, sumRel) {
			t.Errorf("McNemar(%d, %d) = %.17g two-sided, %.17g worse; exact sums %.17g, %.17g", r.PassToFail, r.FailToPass, got.TwoSided, got.Worse, r.ExactTwoSided, r.ExactWorse)
		}
	}
}

func TestReferenceBetaInc(t *testing.T) {
	for _, r := range loadReference(t).BetaInc {
		got, _, err := betaInc(r.A, r.B, r.X, 1-r.X)
		if err != nil {
			t.Errorf("betaInc(%v, %v, %v): %v", r.A, r.B, r.X, err)
			continue
		}
		if !near(got, r.Value, exactRel) {
			t.Errorf("betaInc(%v, %v, %v) = %.17g; scipy %.17g", r.A, r.B, r.X, got, r.Value)
		}
		if r.Exact != nil && !near(got, *r.Exact, sumRel) {
			t.Errorf("betaInc(%v, %v, %v) = %.17g; exact sum %.17g", r.A, r.B, r.X, got, *r.Exact)
		}
	}
}

// scipyTRel is how far scipy 1.10's own t.isf and t.interval are from the true quantile: its cephes stdtrit is
// accurate to about 1e-9 (reference.py polishes it with Newton steps on t.sf and checks the result with mpmath).
const scipyTRel = 1e-8

// tRel is the precision our t quantile must match the polished one to.
const tRel = 1e-12

func TestReferenceTQuantile(t *testing.T) {
	for _, r := range loadReference(t).TQuantile {
		got, err := tQuantileUpper(r.Q, r.DF)
		if err != nil {
			t.Errorf("tQuantileUpper(%v, %v): %v", r.Q, r.DF, err)
			continue
		}
		if !near(got, r.Value, tRel) || !near(got, r.ScipyISF, scipyTRel) {
			t.Errorf("tQuantileUpper(%v, %v) = %.17g; polished %.17g, scipy t.isf %.17g", r.Q, r.DF, got, r.Value, r.ScipyISF)
		}
	}
}

func TestReferenceTInterval(t *testing.T) {
	for _, r := range loadReference(t).TInterval {
		got, err := TInterval(r.Values, r.Level)
		if err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		// The half-width is compared, not the endpoints: a mean of 10^6 would hide a wrong width in the 1e-9.
		// The endpoints' own rounding (an ulp of the mean) bounds how well a half-width read back from them can agree.
		ulp := 4 * (math.Nextafter(math.Abs(r.Mean), math.Inf(1)) - math.Abs(r.Mean))
		rel := func(want, rel float64) float64 { return rel + ulp/math.Abs(want) }
		if !near(got.Estimate, r.Mean, 1e-12) ||
			!near(got.High-got.Estimate, r.HalfWidth, rel(r.HalfWidth, tRel)) || !near(got.Estimate-got.Low, r.HalfWidth, rel(r.HalfWidth, tRel)) ||
			!near(got.High-got.Estimate, r.High-r.Mean, rel(r.HalfWidth, scipyTRel)) || !near(got.Estimate-got.Low, r.Mean-r.Low, rel(r.HalfWidth, scipyTRel)) {
			t.Errorf("%s: TInterval = %.17g [%.17g, %.17g]; scipy %.17g [%.17g, %.17g], polished half-width %.17g",
				r.Name, got.Estimate, got.Low, got.High, r.Mean, r.Low, r.High, r.HalfWidth)
		}
	}
}

func TestReferencePassK(t *testing.T) {
	for _, r := range loadReference(t).PassK {
		at, err := PassAtK(r.N, r.C, r.K)
		if err != nil {
			t.Errorf("PassAtK(%d, %d, %d): %v", r.N, r.C, r.K, err)
		}
		hat, err := PassHatK(r.N, r.C, r.K)
		if err != nil {
			t.Errorf("PassHatK(%d, %d, %d): %v", r.N, r.C, r.K, err)
		}
		if !near(at, r.PassAtK, 1e-12) || !near(hat, r.PassHatK, 1e-12) {
			t.Errorf("n=%d c=%d k=%d: pass@k %.17g, pass^k %.17g; exact fractions %.17g, %.17g", r.N, r.C, r.K, at, hat, r.PassAtK, r.PassHatK)
		}
	}
}

// mcTolerance is how far a Monte Carlo p-value may be from the exact p: four standard errors of a binomial share
// over resamples, plus the +1 of (hits+1)/(resamples+1). A correct implementation stays inside with probability
// 0.99994 per comparison; with fixed seeds the test is deterministic.
func mcTolerance(p float64, resamples int) float64 {
	return 4*math.Sqrt(p*(1-p)/float64(resamples)) + 2/float64(resamples)
}

// TestReferenceSignFlip: exact p-values equal the reference to 1e-9 (every data set whose pattern classes fit the
// default bound is exact); Monte Carlo ones, at the default 10,000 resamples and at 200,000, and forced on the
// small sets, lie within mcTolerance of the exact reference.
func TestReferenceSignFlip(t *testing.T) {
	exactSeen := 0
	for i, r := range loadReference(t).SignFlip {
		diffs := make([]float64, len(r.Current))
		for j := range diffs {
			diffs[j] = r.Current[j] - r.Baseline[j]
		}
		for _, tc := range []struct {
			name string
			opts SignFlipOptions
		}{
			{"default", SignFlipOptions{Seed: uint64(i)}},
			{"200000 resamples", SignFlipOptions{Seed: uint64(i), Resamples: 200_000}},
			{"forced Monte Carlo", SignFlipOptions{Seed: uint64(i) + 100, ExactPatterns: -1}},
		} {
			got, err := SignFlip(diffs, tc.opts)
			if err != nil {
				t.Errorf("%s, %s: %v", r.Name, tc.name, err)
				continue
			}
			if got.Exact {
				exactSeen++
				if !near(got.Less, r.Less, exactRel) || !near(got.TwoSided, r.TwoSided, exactRel) {
					t.Errorf("%s, %s: exact p = %.17g (one-sided), %.17g (two-sided); reference (%s) %.17g, %.17g", r.Name, tc.name, got.Less, got.TwoSided, r.Method, r.Less, r.TwoSided)
				}
				continue
			}
			tolLess := mcTolerance(r.Less, got.Resamples)
			// The two-sided p is twice a tail: twice its error.
			tolTwo := 2 * mcTolerance(r.TwoSided/2, got.Resamples)
			if math.Abs(got.Less-r.Less) > tolLess || math.Abs(got.TwoSided-r.TwoSided) > tolTwo {
				t.Errorf("%s, %s: Monte Carlo p = %.6g (one-sided, ±%.2g), %.6g (two-sided, ±%.2g) over %d resamples; exact %.6g, %.6g (%s)",
					r.Name, tc.name, got.Less, tolLess, got.TwoSided, tolTwo, got.Resamples, r.Less, r.TwoSided, r.Method)
			}
			if want := math.Sqrt(got.Less * (1 - got.Less) / float64(got.Resamples)); got.MCError != want {
				t.Errorf("%s, %s: MCError %v, want %v", r.Name, tc.name, got.MCError, want)
			}
		}
	}
	if exactSeen < 10 {
		t.Errorf("only %d exact comparisons ran; the reference's small sets should be exact", exactSeen)
	}
}

// TestReferenceBootstrap: the percentile bootstrap interval agrees with scipy.stats.bootstrap (99,999 resamples)
// within 0.1 standard errors of the mean, plus one step of the lattice for values on one (pass-rate differences
// of 50 cases with 5 trials move the mean by 0.2/50). Reason: a 95% percentile endpoint's Monte Carlo standard
// error is about 2.7/sqrt(B) standard errors of the mean, 0.019 at our B = 20,000 and 0.0085 at scipy's; four
// of the combined errors is 0.083.
func TestReferenceBootstrap(t *testing.T) {
	for i, r := range loadReference(t).Bootstrap {
		got, err := BootstrapMean(r.Values, BootstrapOptions{Seed: uint64(i), Resamples: 20_000, Level: r.Level})
		if err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		tol := 0.1*r.StandardError + latticeStep(r.Values)
		if math.Abs(got.Low-r.Low) > tol || math.Abs(got.High-r.High) > tol {
			t.Errorf("%s: bootstrap [%.6g, %.6g]; scipy [%.6g, %.6g] (tolerance %.2g)", r.Name, got.Low, got.High, r.Low, r.High, tol)
		}
		if !near(got.Estimate, meanOf(r.Values), 1e-15) {
			t.Errorf("%s: estimate %v, want the mean %v", r.Name, got.Estimate, meanOf(r.Values))
		}
	}
}

// latticeStep is the step of the bootstrap mean when every value is a multiple of 0.2 (pass-rate differences with
// 5 trials), else 0.
func latticeStep(values []float64) float64 {
	for _, v := range values {
		if m := v / 0.2; math.Abs(m-math.Round(m)) > 1e-9 {
			return 0
		}
	}
	return 0.2 / float64(len(values))
}

func TestReferenceVersions(t *testing.T) {
	ref := loadReference(t)
	for _, k := range []string{"scipy", "statsmodels", "numpy"} {
		if ref.Versions[k] == "" {
			t.Errorf("reference.json does not say which %s made it", k)
		}
	}
	t.Logf("reference from %v", ref.Versions)
}
