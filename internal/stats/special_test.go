package stats

import (
	"math"
	"math/big"
	"testing"
)

func TestBetaIncEdgesAndErrors(t *testing.T) {
	tests := []struct {
		name         string
		a, b, x, y   float64
		lower, upper float64
		wantErr      bool
	}{
		{name: "x = 0", a: 2, b: 3, x: 0, y: 1, lower: 0, upper: 1},
		{name: "x = 1", a: 2, b: 3, x: 1, y: 0, lower: 1, upper: 0},
		{name: "a = b = 1 is the uniform", a: 1, b: 1, x: 0.3, y: 0.7, lower: 0.3, upper: 0.7},
		// I_x(a, 1) = x^a.
		{name: "b = 1", a: 3, b: 1, x: 0.5, y: 0.5, lower: 0.125, upper: 0.875},
		{name: "a = 0", a: 0, b: 1, x: 0.5, y: 0.5, wantErr: true},
		{name: "b negative", a: 1, b: -1, x: 0.5, y: 0.5, wantErr: true},
		{name: "a infinite", a: math.Inf(1), b: 1, x: 0.5, y: 0.5, wantErr: true},
		{name: "x above 1", a: 1, b: 1, x: 1.5, y: -0.5, wantErr: true},
		{name: "x NaN", a: 1, b: 1, x: math.NaN(), y: 0.5, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower, upper, err := betaInc(tt.a, tt.b, tt.x, tt.y)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !near(lower, tt.lower, 1e-14) || !near(upper, tt.upper, 1e-14) {
				t.Errorf("betaInc(%v, %v, %v) = %v, %v; want %v, %v", tt.a, tt.b, tt.x, lower, upper, tt.lower, tt.upper)
			}
		})
	}
}

// TestBetaIncSymmetry: I_x(a, b) = 1 - I_{1-x}(b, a), on both sides of the continued fraction's switch.
func TestBetaIncSymmetry(t *testing.T) {
	for _, p := range [][3]float64{{2, 5, 0.1}, {2, 5, 0.6}, {0.5, 0.5, 0.9}, {300, 20, 0.93}, {40000, 0.5, 0.9999}} {
		a, b, x := p[0], p[1], p[2]
		l1, u1, err1 := betaInc(a, b, x, 1-x)
		l2, u2, err2 := betaInc(b, a, 1-x, x)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !near(l1, u2, 1e-13) || !near(u1, l2, 1e-13) {
			t.Errorf("I_%v(%v, %v) = %v, %v; I_%v(%v, %v) = %v, %v", x, a, b, l1, u1, 1-x, b, a, l2, u2)
		}
	}
}

// TestBinomialHalfPMF: the probabilities equal exact binomial coefficients over 2^n (math/big), on both sides of
// the switch from exact integers (n <= 60) to betaPowTerm, and sum to 1.
func TestBinomialHalfPMF(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 60, 61, 200, 1000, 5000} {
		pmf := binomialHalfPMF(n)
		if len(pmf) != n+1 {
			t.Fatalf("n = %d: %d probabilities", n, len(pmf))
		}
		var sum float64
		coef, pow := big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(n))
		for j, p := range pmf {
			sum += p
			want, _ := new(big.Rat).SetFrac(coef, pow).Float64()
			// C(n, j+1) = C(n, j)·(n-j)/(j+1).
			coef = new(big.Int).Div(new(big.Int).Mul(coef, big.NewInt(int64(n-j))), big.NewInt(int64(j+1)))
			if !near(p, want, 1e-12) && want > 1e-300 {
				t.Errorf("n = %d, j = %d: %.17g, want %.17g", n, j, p, want)
			}
		}
		if !near(sum, 1, 1e-12) {
			t.Errorf("n = %d: the probabilities sum to %.17g", n, sum)
		}
	}
}

func TestBinomialHalfTails(t *testing.T) {
	tests := []struct {
		k, n    int
		cdf, sf float64
	}{
		{k: -1, n: 5, cdf: 0, sf: 1},
		{k: 0, n: 0, cdf: 1, sf: 1},
		{k: 0, n: 3, cdf: 1.0 / 8, sf: 1},
		{k: 1, n: 3, cdf: 4.0 / 8, sf: 7.0 / 8},
		{k: 3, n: 3, cdf: 1, sf: 1.0 / 8},
		{k: 4, n: 3, cdf: 1, sf: 0},
		{k: 9, n: 11, cdf: 2036.0 / 2048, sf: 67.0 / 2048},
	}
	for _, tt := range tests {
		cdf, err := binomialHalfCDF(tt.k, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := binomialHalfSF(tt.k, tt.n)
		if err != nil {
			t.Fatal(err)
		}
		if !near(cdf, tt.cdf, 1e-14) || !near(sf, tt.sf, 1e-14) {
			t.Errorf("k = %d, n = %d: P(X <= k) = %v, P(X >= k) = %v; want %v, %v", tt.k, tt.n, cdf, sf, tt.cdf, tt.sf)
		}
	}
}

// TestTQuantileClosedForms: one and two degrees of freedom have closed forms (Cauchy: cot(πq); ν = 2:
// (1-2q)/sqrt(2q(1-q))), and many degrees of freedom approach the normal quantile.
func TestTQuantileClosedForms(t *testing.T) {
	for _, q := range []float64{0.4, 0.25, 0.05, 0.025, 0.001, 1e-8} {
		got, err := tQuantileUpper(q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 / math.Tan(math.Pi*q); !near(got, want, 1e-12) {
			t.Errorf("ν = 1, q = %v: %.17g, want %.17g", q, got, want)
		}
		got, err = tQuantileUpper(q, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := (1 - 2*q) / math.Sqrt(2*q*(1-q)); !near(got, want, 1e-12) {
			t.Errorf("ν = 2, q = %v: %.17g, want %.17g", q, got, want)
		}
		got, err = tQuantileUpper(q, 1e9)
		if err != nil {
			t.Fatal(err)
		}
		if want := normalQuantileUpper(q); !near(got, want, 1e-8) {
			t.Errorf("ν = 1e9, q = %v: %.17g, want the normal's %.17g", q, got, want)
		}
	}
	if got, err := tQuantileUpper(0.5, 7); err != nil || got != 0 {
		t.Errorf("the median: %v, %v; want 0", got, err)
	}
	for _, bad := range [][2]float64{{0, 5}, {0.6, 5}, {0.05, 0}, {math.NaN(), 5}} {
		if _, err := tQuantileUpper(bad[0], bad[1]); err == nil {
			t.Errorf("tQuantileUpper(%v, %v): no error", bad[0], bad[1])
		}
	}
}

func TestNormalQuantile(t *testing.T) {
	for _, tt := range [][2]float64{{0.025, 1.959963984540054}, {0.05, 1.6448536269514722}, {0.5, 0}, {0.005, 2.5758293035489004}} {
		if got := normalQuantileUpper(tt[0]); !near(got, tt[1], 1e-14) {
			t.Errorf("normalQuantileUpper(%v) = %.17g, want %.17g", tt[0], got, tt[1])
		}
	}
}
