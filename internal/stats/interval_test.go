package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// approx compares floats to 1e-12 relative (the package's own arithmetic; reference_test.go checks against scipy).
var approx = cmpopts.EquateApprox(1e-12, 1e-15)

func TestWilson(t *testing.T) {
	tests := []struct {
		name         string
		successes, n int
		level        float64
		want         Interval
		wantErr      bool
	}{
		// Values from statsmodels' proportion_confint(method="wilson") (testdata/reference.json).
		{name: "none of ten", successes: 0, n: 10, level: 0.95, want: Interval{Estimate: 0, Low: 0, High: 0.2775327998628892, Level: 0.95}},
		{name: "40 of 50, level 0 is 95%", successes: 40, n: 50, want: Interval{Estimate: 0.8, Low: 0.6696289406777459, High: 0.887562499842239, Level: 0.95}},
		{name: "n = 0", successes: 0, n: 0, wantErr: true},
		{name: "more successes than trials", successes: 3, n: 2, wantErr: true},
		{name: "negative successes", successes: -1, n: 2, wantErr: true},
		{name: "level 1", successes: 1, n: 2, level: 1, wantErr: true},
		{name: "level negative", successes: 1, n: 2, level: -0.5, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Wilson(tt.successes, tt.n, tt.level)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("Wilson(%d, %d, %v) (-want +got):\n%s", tt.successes, tt.n, tt.level, diff)
			}
		})
	}
}

// TestWilsonBounds: every interval lies in [0, 1] (to rounding), holds the estimate, and narrows as the level falls.
func TestWilsonBounds(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for s := 0; s <= n; s++ {
			w95, err := Wilson(s, n, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			w80, _ := Wilson(s, n, 0.80)
			if w95.Low < -1e-15 || w95.High > 1+1e-15 || w95.Low > w95.Estimate+1e-15 || w95.High < w95.Estimate-1e-15 {
				t.Errorf("Wilson(%d, %d) = %+v: outside [0, 1] or not around the estimate", s, n, w95)
			}
			if w80.Low < w95.Low-1e-15 || w80.High > w95.High+1e-15 {
				t.Errorf("Wilson(%d, %d): 80%% %+v is wider than 95%% %+v", s, n, w80, w95)
			}
		}
	}
}

func TestTInterval(t *testing.T) {
	tests := []struct {
		name    string
		values  []float64
		level   float64
		want    Interval
		wantErr bool
	}{
		// mean 0.5, s = 0.25·sqrt(2), t(0.975, 1) = 12.706204736174705: half-width 12.7062·0.25 = 3.1765511840436762.
		{name: "two values", values: []float64{0.25, 0.75}, want: Interval{Estimate: 0.5, Low: 0.5 - 3.1765511840436762, High: 0.5 + 3.1765511840436762, Level: 0.95}},
		{name: "all equal", values: []float64{0.4, 0.4, 0.4}, level: 0.9, want: Interval{Estimate: 0.4, Low: 0.4, High: 0.4, Level: 0.9}},
		{name: "one value", values: []float64{1}, wantErr: true},
		{name: "NaN", values: []float64{1, math.NaN()}, wantErr: true},
		{name: "bad level", values: []float64{1, 2}, level: 2, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TInterval(tt.values, tt.level)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("TInterval (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMeanSDLargeOffset: the two-pass standard deviation keeps its digits under a large mean.
func TestMeanSDLargeOffset(t *testing.T) {
	mean, sd, err := meanSD([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3})
	if err != nil {
		t.Fatal(err)
	}
	if mean != 1e9+2 || !near(sd, 1, 1e-12) {
		t.Errorf("meanSD = %v, %v; want 1e9+2, 1", mean, sd)
	}
}
