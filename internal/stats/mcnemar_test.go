package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMcNemar(t *testing.T) {
	tests := []struct {
		name                   string
		passToFail, failToPass int
		want                   McNemarResult
		wantErr                bool
	}{
		{name: "no discordant case", want: McNemarResult{TwoSided: 1, Worse: 1}},
		// P(X >= 9 | 11) = (55 + 11 + 1)/2048; the two-sided p doubles the smaller tail.
		{name: "9 fell, 2 rose", passToFail: 9, failToPass: 2, want: McNemarResult{PassToFail: 9, FailToPass: 2, TwoSided: 134.0 / 2048, Worse: 67.0 / 2048}},
		// The same table read the other way: the two-sided p is the same, "worse" is nearly 1.
		{name: "2 fell, 9 rose", passToFail: 2, failToPass: 9, want: McNemarResult{PassToFail: 2, FailToPass: 9, TwoSided: 134.0 / 2048, Worse: 2036.0 / 2048}},
		{name: "one fell", passToFail: 1, want: McNemarResult{PassToFail: 1, TwoSided: 1, Worse: 0.5}},
		{name: "ten fell", passToFail: 10, want: McNemarResult{PassToFail: 10, TwoSided: 2.0 / 1024, Worse: 1.0 / 1024}},
		{name: "tie", passToFail: 7, failToPass: 7, want: McNemarResult{PassToFail: 7, FailToPass: 7, TwoSided: 1, Worse: 9908.0 / 16384}},
		{name: "negative", passToFail: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := McNemar(tt.passToFail, tt.failToPass)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("McNemar(%d, %d) (-want +got):\n%s", tt.passToFail, tt.failToPass, diff)
			}
		})
	}
}

// TestMcNemarIsTheSignFlipOfPassFail: with one trial a case's difference is -1, 0 or 1, and the exact sign-flip
// test's one-sided p-value is McNemar's "worse" p-value (both are the binomial sign test).
func TestMcNemarIsTheSignFlipOfPassFail(t *testing.T) {
	for fell := 0; fell <= 25; fell += 3 {
		for rose := 0; rose <= 25; rose += 4 {
			diffs := []float64{0, 0}
			for range fell {
				diffs = append(diffs, -1)
			}
			for range rose {
				diffs = append(diffs, 1)
			}
			sf, err := SignFlip(diffs, SignFlipOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := McNemar(fell, rose)
			if err != nil {
				t.Fatal(err)
			}
			if !sf.Exact || !near(sf.Less, m.Worse, 1e-12) || !near(sf.TwoSided, m.TwoSided, 1e-12) {
				t.Errorf("%d fell, %d rose: sign-flip %+v; McNemar %+v", fell, rose, sf, m)
			}
		}
	}
}
