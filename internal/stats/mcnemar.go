package stats

import (
	"fmt"
	"math"
)

// McNemarResult is McNemar's exact test on the discordant cases of two pass/fail runs of the same cases.
type McNemarResult struct {
	// PassToFail counts the cases that passed in the baseline and fail now; FailToPass the other way round. Cases
	// with the same verdict in both runs carry no information about a difference and do not enter the test.
	PassToFail, FailToPass int
	// TwoSided is the two-sided p-value exactly as statsmodels' mcnemar(table, exact=True) computes it:
	// min(1, 2 · P(X <= min(PassToFail, FailToPass))) for X ~ Binomial(PassToFail + FailToPass, 1/2).
	TwoSided float64
	// Worse is the one-sided p-value for "the current run is worse": P(X >= PassToFail) for X ~
	// Binomial(PassToFail + FailToPass, 1/2), the chance of at least this many pass -> fail flips among the
	// discordant cases if neither run were better. Small when PassToFail is well above FailToPass. This is the
	// side Regressed uses.
	Worse float64
}

// McNemar runs McNemar's exact test (the binomial sign test on the discordant pairs). With no discordant case
// both p-values are 1.
func McNemar(passToFail, failToPass int) (McNemarResult, error) {
	if passToFail < 0 || failToPass < 0 {
		return McNemarResult{}, fmt.Errorf("mcnemar: discordant counts %d (pass -> fail) and %d (fail -> pass) must not be negative", passToFail, failToPass)
	}
	n := passToFail + failToPass
	low, err := binomialHalfCDF(min(passToFail, failToPass), n)
	if err != nil {
		return McNemarResult{}, err
	}
	worse, err := binomialHalfSF(passToFail, n)
	if err != nil {
		return McNemarResult{}, err
	}
	return McNemarResult{
		PassToFail: passToFail,
		FailToPass: failToPass,
		TwoSided:   math.Min(1, 2*low),
		Worse:      worse,
	}, nil
}
