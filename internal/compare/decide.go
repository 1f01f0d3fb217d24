package compare

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

// Bounds are spec.baseline's test and how much worse a run may be than its baseline before it counts as
// regressed.
type Bounds struct {
	// Test is the test that decides (Count or Paired).
	Test evalsv1alpha1.BaselineTest

	// MaxNewFailures is how many newly failing cases Count allows.
	MaxNewFailures int
	// MaxScoreDrop, when set, is how far the mean score may fall under Count (a decimal in [0, 1]).
	MaxScoreDrop *big.Rat

	// Alpha is Paired's significance level, in (0, 1), as written (for messages) and as a number.
	Alpha     string
	AlphaRate float64
	// MinEffect is the smallest pass-rate drop Paired calls a regression, in [0, 1], as written and as a number.
	MinEffect     string
	MinEffectRate float64
	// Seed seeds Paired's Monte Carlo and bootstrap draws (Seed of the two runs), so a comparison repeats.
	Seed uint64
}

// FieldError is a spec.baseline field BoundsOf cannot read; the API's validation keeps such values out, so it comes
// from an object stored before a rule existed or from a flag of the same name.
type FieldError struct {
	// Field is the field's JSON name under spec.baseline ("alpha"); Value is what it held; Want says what it must be.
	Field, Value, Want string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("baseline.%s %q is not %s", e.Field, e.Value, e.Want)
}

// BoundsOf reads spec.baseline's test and bounds; a field left unset takes the API's default. Seed is the
// caller's to set (Seed). An invalid field is a *FieldError.
func BoundsOf(spec *evalsv1alpha1.Baseline) (Bounds, error) {
	out := Bounds{Test: evalsv1alpha1.DefaultBaselineTest, Alpha: evalsv1alpha1.DefaultBaselineAlpha,
		MinEffect: evalsv1alpha1.DefaultBaselineMinEffect}
	one := big.NewRat(1, 1)
	if spec.Test != nil {
		out.Test = *spec.Test
	}
	if out.Test != evalsv1alpha1.BaselineTestCount && out.Test != evalsv1alpha1.BaselineTestPaired {
		return out, &FieldError{Field: "test", Value: string(out.Test), Want: "one of Count, Paired"}
	}
	if spec.MaxNewFailures != nil {
		out.MaxNewFailures = int(*spec.MaxNewFailures)
	}
	if out.MaxNewFailures < 0 {
		return out, &FieldError{Field: "maxNewFailures", Value: fmt.Sprint(out.MaxNewFailures), Want: "a count of at least 0"}
	}
	if spec.MaxScoreDrop != nil {
		drop, ok := fraction(*spec.MaxScoreDrop)
		if !ok || drop.Cmp(one) > 0 {
			return out, &FieldError{Field: "maxScoreDrop", Value: *spec.MaxScoreDrop, Want: "a decimal in [0, 1]"}
		}
		out.MaxScoreDrop = drop
	}
	if spec.Alpha != nil {
		out.Alpha = *spec.Alpha
	}
	alpha, ok := fraction(out.Alpha)
	if !ok || alpha.Sign() == 0 || alpha.Cmp(one) >= 0 {
		return out, &FieldError{Field: "alpha", Value: out.Alpha, Want: "a decimal strictly between 0 and 1"}
	}
	out.AlphaRate, _ = alpha.Float64()
	if spec.MinEffect != nil {
		out.MinEffect = *spec.MinEffect
	}
	minEffect, ok := fraction(out.MinEffect)
	if !ok || minEffect.Cmp(one) > 0 {
		return out, &FieldError{Field: "minEffect", Value: out.MinEffect, Want: "a decimal in [0, 1]"}
	}
	out.MinEffectRate, _ = minEffect.Float64()
	return out, nil
}

// fraction reads a plain decimal of at least 0 ("0.05", "1"): digits and at most one point, no sign, exponent or
// fraction bar, as the API's decimal fields are written.
func fraction(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 32 {
		return nil, false
	}
	point := false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
		case r == '.' && !point && i > 0 && i < len(s)-1:
			point = true
		default:
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// Seed is the Paired test's seed for a run compared with its baseline: the first 8 bytes of the sha256 of both
// runs' names and uids. The manager and `kubectl evalrun compare` derive the same seed, so every reconcile and
// every compare of the same two runs gives the same p-value and intervals.
func Seed(baseline, run *evalsv1alpha1.EvalRun) uint64 {
	h := sha256.New()
	for _, s := range []string{"evalrun-operator paired comparison", baseline.Name, string(baseline.UID), run.Name, string(run.UID)} {
		// Each part ends with a NUL, which no name or uid holds, so the parts cannot run into each other.
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// Decision is what a comparison says of the run under spec.baseline's test.
type Decision struct {
	// Test is the test that decided.
	Test evalsv1alpha1.BaselineTest
	// Regressed is the Regressed condition's status; Why says why (or why not) in one line.
	Regressed bool
	Why       string
	// Paired is the Paired test's result (status.baseline.paired); nil under Count.
	Paired *evalsv1alpha1.PairedComparison
}

// Decide runs spec.baseline's test on the comparison. Count never fails; Paired fails only on counts no stored
// result can give (internal/stats refusing them), which the caller reports as a comparison that could not be made.
func (c *Comparison) Decide(b Bounds) (Decision, error) {
	if b.Test == evalsv1alpha1.BaselineTestPaired {
		return c.pairedTest(b)
	}
	regressed, why := c.countRegressed(b)
	return Decision{Test: evalsv1alpha1.BaselineTestCount, Regressed: regressed, Why: why}, nil
}

// Record writes the test and its result into status.baseline.
func (d *Decision) Record(st *evalsv1alpha1.BaselineComparison) {
	st.Test, st.Paired = d.Test, d.Paired
}
