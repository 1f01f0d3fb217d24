package stats

import (
	"fmt"
	"math"
)

// The special functions the tests and intervals need, written from their textbook definitions: the regularized
// incomplete beta function (a continued fraction evaluated with Lentz's method), the binomial tails and the
// quantiles of the normal and Student t distributions. Each is checked against scipy in reference_test.go.

// betaMaxIter bounds the continued fraction's terms. It needs about sqrt(max(a, b)) terms; a binomial of 10^8
// trials converges well inside the bound.
const betaMaxIter = 100_000

// betaInc returns the regularized incomplete beta function I_x(a, b) and its complement 1 - I_x(a, b), for a, b >
// 0 and x in [0, 1] with y = 1 - x passed separately (so a caller that knows 1 - x better than x, or the other way
// round, loses nothing). The continued fraction is evaluated for the smaller side, and the other is its complement,
// so a small tail keeps its relative precision.
func betaInc(a, b, x, y float64) (lower, upper float64, err error) {
	switch {
	case !(a > 0) || !(b > 0) || math.IsInf(a, 0) || math.IsInf(b, 0):
		return 0, 0, fmt.Errorf("incomplete beta: parameters a = %v and b = %v must be finite and positive", a, b)
	case !(x >= 0 && x <= 1) || !(y >= 0 && y <= 1):
		return 0, 0, fmt.Errorf("incomplete beta: x = %v and 1-x = %v must lie in [0, 1]", x, y)
	case x == 0:
		return 0, 1, nil
	case y == 0:
		return 1, 0, nil
	}
	front := betaPowTerm(a, b, x, y)
	if x < (a+1)/(a+b+2) {
		f, err := betaFraction(a, b, x)
		if err != nil {
			return 0, 0, err
		}
		lower = front * f / a
		return lower, 1 - lower, nil
	}
	f, err := betaFraction(b, a, y)
	if err != nil {
		return 0, 0, err
	}
	upper = front * f / b
	return 1 - upper, upper, nil
}

// betaPowTerm returns x^a y^b / B(a, b) for x + y = 1, accurate for large a and b too. Written with Stirling's
// formula, lnΓ(z) = (z-½)ln z - z + ½ln 2π + δ(z), the large terms cancel on paper:
//
//	a ln x + b ln y - ln B(a, b) = a ln(x(a+b)/a) + b ln(y(a+b)/b) + ½ ln(ab/(a+b)) - ½ ln 2π + δ(a+b) - δ(a) - δ(b)
//
// and with D = xb - ya the first two terms are a·log1p(D/a) + b·log1p(-D/b), whose error in D cancels too. Plain
// log-gamma differences lose about 1e-16 · a of relative precision instead (1e-11 at a = 50,000: a binomial of
// 10^5 trials, a t quantile with 10^5 degrees of freedom).
func betaPowTerm(a, b, x, y float64) float64 {
	d := x*b - y*a
	term := func(w, r, dRatio float64) float64 {
		// w·ln r, with r = 1 + dRatio; log1p where r is near 1, where the difference D carries the precision.
		if r > 0.5 && r < 2 {
			return w * math.Log1p(dRatio)
		}
		return w * math.Log(r)
	}
	ab := a + b
	f := term(a, x*ab/a, d/a) + term(b, y*ab/b, -d/b) +
		0.5*math.Log(a*b/ab) - 0.5*math.Log(2*math.Pi) + stirlingDelta(ab) - stirlingDelta(a) - stirlingDelta(b)
	return math.Exp(f)
}

// stirlingDelta returns δ(z) = lnΓ(z) - ((z-½)ln z - z + ½ln 2π), Stirling's remainder, for z > 0: its asymptotic
// series from z = 10 (the next term is below 1e-17 there), log-gamma below.
func stirlingDelta(z float64) float64 {
	if z < 10 {
		lg, _ := math.Lgamma(z)
		return lg - ((z-0.5)*math.Log(z) - z + 0.5*math.Log(2*math.Pi))
	}
	// 1/(12z) - 1/(360z³) + 1/(1260z⁵) - 1/(1680z⁷) + 1/(1188z⁹) - 691/(360360z¹¹) + 1/(156z¹³) - 3617/(122400z¹⁵).
	w := 1 / (z * z)
	series := 1.0/12 + w*(-1.0/360+w*(1.0/1260+w*(-1.0/1680+w*(1.0/1188+w*(-691.0/360360+w*(1.0/156+w*(-3617.0/122400)))))))
	return series / z
}

// betaFraction evaluates the continued fraction of I_x(a, b) (DLMF 8.17.22) by the modified Lentz method; it
// converges fast for x < (a+1)/(a+b+2).
func betaFraction(a, b, x float64) (float64, error) {
	const tiny = 1e-300
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / clamp(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= betaMaxIter; m++ {
		fm := float64(m)
		// The even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)).
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		h *= d * c
		// The odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < 1e-16 {
			return h, nil
		}
	}
	return 0, fmt.Errorf("incomplete beta: the continued fraction for a = %v, b = %v, x = %v did not converge in %d terms", a, b, x, betaMaxIter)
}

// binomialHalfCDF returns P(X <= k) for X ~ Binomial(n, 1/2).
func binomialHalfCDF(k, n int) (float64, error) {
	switch {
	case k < 0:
		return 0, nil
	case k >= n:
		return 1, nil
	}
	// P(X <= k) = I_{1/2}(n - k, k + 1).
	lower, _, err := betaInc(float64(n-k), float64(k+1), 0.5, 0.5)
	return lower, err
}

// binomialHalfSF returns P(X >= k) for X ~ Binomial(n, 1/2).
func binomialHalfSF(k, n int) (float64, error) {
	switch {
	case k <= 0:
		return 1, nil
	case k > n:
		return 0, nil
	}
	// P(X >= k) = I_{1/2}(k, n - k + 1).
	lower, _, err := betaInc(float64(k), float64(n-k+1), 0.5, 0.5)
	return lower, err
}

// binomialHalfPMF returns P(X = j) for X ~ Binomial(n, 1/2), j = 0..n. Up to 60 trials the binomial coefficients
// are exact integers; beyond, C(n, j)/2^n = 4/(n+1) · betaPowTerm(j+1, n-j+1, ½, ½), since
// 1/B(j+1, n-j+1) = (n+1)·C(n, j).
func binomialHalfPMF(n int) []float64 {
	pmf := make([]float64, n+1)
	if n <= 60 {
		var coef uint64 = 1
		scale := math.Ldexp(1, -n)
		for j := 0; j <= n; j++ {
			pmf[j] = float64(coef) * scale
			// C(n, j+1) = C(n, j) (n - j) / (j + 1): the division is exact, and the product stays below
			// 60 * C(60, 30) < 2^63.
			coef = coef * uint64(n-j) / uint64(j+1)
		}
		return pmf
	}
	for j := 0; j <= n; j++ {
		pmf[j] = 4 / float64(n+1) * betaPowTerm(float64(j+1), float64(n-j+1), 0.5, 0.5)
	}
	return pmf
}

// normalQuantileUpper returns z with P(Z > z) = q for a standard normal Z, q in (0, 1) (scipy's norm.isf).
func normalQuantileUpper(q float64) float64 {
	// P(Z > z) = erfc(z / sqrt 2) / 2.
	return math.Sqrt2 * math.Erfcinv(2*q)
}

// tDensity is the density of Student's t with nu degrees of freedom at t.
func tDensity(t, nu float64) float64 {
	l1, _ := math.Lgamma((nu + 1) / 2)
	l2, _ := math.Lgamma(nu / 2)
	return math.Exp(l1-l2-0.5*math.Log(nu*math.Pi)) * math.Pow(1+t*t/nu, -(nu+1)/2)
}

// tUpperTail returns P(T > t) for t >= 0 and Student's T with nu degrees of freedom.
func tUpperTail(t, nu float64) (float64, error) {
	// P(T > t) = I_{nu/(nu+t^2)}(nu/2, 1/2) / 2; 1 - x = t^2/(nu+t^2) is passed exactly.
	den := nu + t*t
	lower, _, err := betaInc(nu/2, 0.5, nu/den, t*t/den)
	return lower / 2, err
}

// tQuantileUpper returns t with P(T > t) = q for Student's T with nu > 0 degrees of freedom, q in (0, 1/2] (scipy's
// t.isf). Newton's method from the normal quantile, kept inside a bracket that bisection narrows when a step
// would leave it.
func tQuantileUpper(q, nu float64) (float64, error) {
	if !(q > 0 && q <= 0.5) || !(nu > 0) {
		return 0, fmt.Errorf("t quantile: tail probability %v must lie in (0, 0.5] and degrees of freedom %v be positive", q, nu)
	}
	if q == 0.5 {
		return 0, nil
	}
	// The bracket: P(T > lo) > q >= P(T > hi).
	lo, hi := 0.0, math.Max(1, normalQuantileUpper(q))
	for {
		p, err := tUpperTail(hi, nu)
		if err != nil {
			return 0, err
		}
		if p <= q {
			break
		}
		lo, hi = hi, hi*2
		if math.IsInf(hi, 0) {
			return 0, fmt.Errorf("t quantile: no finite quantile for tail %v with %v degrees of freedom", q, nu)
		}
	}
	t := normalQuantileUpper(q)
	if !(t > lo && t < hi) {
		t = (lo + hi) / 2
	}
	for range 200 {
		p, err := tUpperTail(t, nu)
		if err != nil {
			return 0, err
		}
		if p > q {
			lo = t
		} else {
			hi = t
		}
		next := t + (p-q)/tDensity(t, nu)
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-t) <= 1e-15*t || hi-lo <= 1e-15*hi {
			return next, nil
		}
		t = next
	}
	return t, nil
}
