package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBootstrapMean(t *testing.T) {
	tests := []struct {
		name    string
		values  []float64
		opts    BootstrapOptions
		want    Interval
		wantErr bool
	}{
		{name: "one value", values: []float64{0.4}, want: Interval{Estimate: 0.4, Low: 0.4, High: 0.4, Level: 0.95}},
		{name: "all equal", values: []float64{-0.2, -0.2, -0.2}, opts: BootstrapOptions{Level: 0.9}, want: Interval{Estimate: -0.2, Low: -0.2, High: -0.2, Level: 0.9}},
		{name: "none", values: nil, wantErr: true},
		{name: "NaN", values: []float64{1, math.NaN()}, wantErr: true},
		{name: "negative resamples", values: []float64{1}, opts: BootstrapOptions{Resamples: -5}, wantErr: true},
		{name: "bad level", values: []float64{1}, opts: BootstrapOptions{Level: 1.5}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BootstrapMean(tt.values, tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("BootstrapMean (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBootstrapTwoValues: with values 0 and 1 the bootstrap mean of two draws is 0, ½ or 1 with probabilities ¼,
// ½, ¼; a 40% interval (the 0.3 and 0.7 quantiles) is [0.5, 0.5] and a 99% interval [0, 1].
func TestBootstrapTwoValues(t *testing.T) {
	for _, tt := range []struct {
		level     float64
		low, high float64
	}{{0.4, 0.5, 0.5}, {0.99, 0, 1}} {
		got, err := BootstrapMean([]float64{0, 1}, BootstrapOptions{Seed: 1, Resamples: 20_000, Level: tt.level})
		if err != nil {
			t.Fatal(err)
		}
		if got.Low != tt.low || got.High != tt.high {
			t.Errorf("level %v: [%v, %v], want [%v, %v]", tt.level, got.Low, got.High, tt.low, tt.high)
		}
	}
}

// TestBootstrapSeed: one seed, one interval; another seed, another interval; a higher level, a wider one.
func TestBootstrapSeed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	values := make([]float64, 101)
	for i := range values {
		values[i] = r.NormFloat64()
	}
	a, _ := BootstrapMean(values, BootstrapOptions{Seed: 3})
	b, _ := BootstrapMean(values, BootstrapOptions{Seed: 3})
	c, _ := BootstrapMean(values, BootstrapOptions{Seed: 4})
	wide, _ := BootstrapMean(values, BootstrapOptions{Seed: 3, Level: 0.99})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed (-first +second):\n%s", diff)
	}
	if a == c {
		t.Errorf("seeds 3 and 4 gave the same interval %+v", a)
	}
	if !(wide.Low < a.Low && wide.High > a.High) {
		t.Errorf("99%% %+v is not wider than 95%% %+v", wide, a)
	}
}

// TestBootstrapCoverage: over 400 samples of 50 normal values, the 95% percentile bootstrap interval holds the
// true mean about 94% of the time (the percentile bootstrap undercovers slightly at n = 50). The bounds [0.90,
// 0.98] are 3.3 binomial standard errors either side of 0.94; a broken resampler (one that always draws the same
// case, or never resamples) falls far outside.
func TestBootstrapCoverage(t *testing.T) {
	reps := 400
	if testing.Short() {
		reps = 150
	}
	r := rand.New(rand.NewPCG(2, 2))
	covered := 0
	values := make([]float64, 50)
	for rep := range reps {
		for i := range values {
			values[i] = r.NormFloat64()
		}
		iv, err := BootstrapMean(values, BootstrapOptions{Seed: uint64(rep), Resamples: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if iv.Low <= 0 && 0 <= iv.High {
			covered++
		}
	}
	lo, hi := 0.90, 0.98
	if testing.Short() {
		lo, hi = 0.87, 0.99
	}
	if got := float64(covered) / float64(reps); got < lo || got > hi {
		t.Errorf("coverage %.3f over %d samples; want it in [%v, %v]", got, reps, lo, hi)
	}
}

func TestPairedBootstrap(t *testing.T) {
	base := []float64{1, 0.5, 0.8, 0.2}
	cur := []float64{0.6, 0.5, 1, 0}
	got, err := PairedBootstrap(base, cur, BootstrapOptions{Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := BootstrapMean([]float64{-0.4, 0, 0.2, -0.2}, BootstrapOptions{Seed: 8})
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("PairedBootstrap is not the bootstrap of the differences (-want +got):\n%s", diff)
	}
	if _, err := PairedBootstrap(base, cur[:3], BootstrapOptions{}); err == nil {
		t.Error("unequal lengths: no error")
	}
}

func TestQuantileSorted(t *testing.T) {
	sorted := []float64{1, 2, 4, 8}
	for _, tt := range [][2]float64{{0, 1}, {1, 8}, {0.5, 3}, {0.25, 1.75}, {1.0 / 3, 2}} {
		if got := quantileSorted(sorted, tt[0]); !near(got, tt[1], 1e-15) {
			t.Errorf("quantile %v = %v, want %v", tt[0], got, tt[1])
		}
	}
}
