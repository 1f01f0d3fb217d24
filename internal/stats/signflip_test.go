package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSignFlipExact(t *testing.T) {
	tests := []struct {
		name    string
		diffs   []float64
		want    SignFlipResult
		wantErr bool
	}{
		// ±1 ±2 ±3: sums 6, 4, 2, 0, 0, -2, -4, -6.
		{name: "all rose", diffs: []float64{1, 2, 3},
			want: SignFlipResult{Mean: 2, Cases: 3, NonZero: 3, Exact: true, Less: 1, TwoSided: 0.25}},
		{name: "all fell", diffs: []float64{-1, -2, -3},
			want: SignFlipResult{Mean: -2, Cases: 3, NonZero: 3, Exact: true, Less: 1.0 / 8, TwoSided: 0.25}},
		{name: "mixed, a zero", diffs: []float64{-1, 2, -3, 0},
			want: SignFlipResult{Mean: -0.5, Cases: 4, NonZero: 3, Exact: true, Less: 3.0 / 8, TwoSided: 0.75}},
		// ±0.2 ±0.4 ±0.6: 0.2 + 0.4 - 0.6 is 5.6e-17 in floats, and -0.2 - 0.4 + 0.6 is another tie of 0.
		{name: "ties rounded differently", diffs: []float64{0.2, 0.4, -0.6},
			want: SignFlipResult{Mean: (0.2 + 0.4 - 0.6) / 3, Cases: 3, NonZero: 3, Exact: true, Less: 5.0 / 8, TwoSided: 1}},
		// Tied magnitudes are counted by classes: 4 of -0.2 and 1 of 0.2 is P(Bin(5, ½) >= 4) = 6/32.
		{name: "tied magnitudes", diffs: []float64{-0.2, -0.2, -0.2, -0.2, 0.2, 0},
			want: SignFlipResult{Mean: -0.6 / 6, Cases: 6, NonZero: 5, Exact: true, Less: 6.0 / 32, TwoSided: 12.0 / 32}},
		{name: "no difference", diffs: []float64{0, 0, 0},
			want: SignFlipResult{Cases: 3, Exact: true, Less: 1, TwoSided: 1}},
		{name: "none", diffs: nil, wantErr: true},
		{name: "NaN", diffs: []float64{0.5, math.NaN()}, wantErr: true},
		{name: "infinite", diffs: []float64{math.Inf(-1)}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SignFlip(tt.diffs, SignFlipOptions{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("SignFlip(%v) (-want +got):\n%s", tt.diffs, diff)
			}
		})
	}
	if _, err := SignFlip([]float64{1}, SignFlipOptions{Resamples: -1}); err == nil {
		t.Error("negative resamples: no error")
	}
}

// TestSignFlipExactBound: up to 2^20 pattern classes are enumerated; 20 distinct magnitudes are, 21 are not, and
// 50 pass-rate differences with 5 trials (ties) are.
func TestSignFlipExactBound(t *testing.T) {
	distinct := func(n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(i+1) * 0.01 * float64(1-2*(i%3&1))
		}
		return d
	}
	r := rand.New(rand.NewPCG(3, 4))
	lattice := make([]float64, 50)
	for i := range lattice {
		lattice[i] = float64(r.IntN(11)-5) / 5
	}
	for _, tt := range []struct {
		name      string
		diffs     []float64
		opts      SignFlipOptions
		wantExact bool
	}{
		{"20 distinct", distinct(20), SignFlipOptions{}, true},
		{"21 distinct", distinct(21), SignFlipOptions{}, false},
		{"50 pass rates, 5 trials", lattice, SignFlipOptions{}, true},
		{"a lower bound", distinct(10), SignFlipOptions{ExactPatterns: 1 << 9}, false},
		{"forced Monte Carlo", distinct(3), SignFlipOptions{ExactPatterns: -1}, false},
	} {
		got, err := SignFlip(tt.diffs, tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Exact != tt.wantExact {
			t.Errorf("%s: Exact = %v, want %v", tt.name, got.Exact, tt.wantExact)
		}
		if !got.Exact && (got.Resamples != DefaultResamples || got.MCError <= 0) {
			t.Errorf("%s: Monte Carlo with %d resamples, error %v", tt.name, got.Resamples, got.MCError)
		}
	}
}

// TestSignFlipMonteCarloDeterministic: a seed gives the same p-values whatever the order of the differences;
// another seed gives others, within the stated error of each other.
func TestSignFlipMonteCarloDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	diffs := make([]float64, 300)
	for i := range diffs {
		diffs[i] = r.NormFloat64()*0.2 - 0.02
		if i%7 == 0 {
			diffs[i] = float64(i%5-2) / 5 // some ties and zeros too
		}
	}
	a, err := SignFlip(diffs, SignFlipOptions{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	shuffled := slices.Clone(diffs)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b, err := SignFlip(shuffled, SignFlipOptions{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	// The mean is summed in input order; only it may differ in the last bits.
	if diff := cmp.Diff(a, b, cmpopts.EquateApprox(0, 1e-15)); diff != "" {
		t.Errorf("same seed, shuffled differences (-first +second):\n%s", diff)
	}
	c, err := SignFlip(diffs, SignFlipOptions{Seed: 12})
	if err != nil {
		t.Fatal(err)
	}
	if c.Less == a.Less {
		t.Errorf("seeds 11 and 12 gave the same p = %v: the seed is not used", a.Less)
	}
	if math.Abs(c.Less-a.Less) > 6*a.MCError {
		t.Errorf("seeds 11 and 12: p = %v and %v, more than 6 standard errors (%v) apart", a.Less, c.Less, a.MCError)
	}
}

// TestSignFlipMirror: negating every difference mirrors the test: the two-sided p stays, and the one-sided p of
// the negation is the other tail.
func TestSignFlipMirror(t *testing.T) {
	diffs := []float64{0.3, -0.1, 0.25, 0.4, -0.05, 0.6, 0.6, -0.2, 0.15, 0.8}
	neg := make([]float64, len(diffs))
	for i, d := range diffs {
		neg[i] = -d
	}
	a, _ := SignFlip(diffs, SignFlipOptions{})
	b, _ := SignFlip(neg, SignFlipOptions{})
	// P(S <= -s) over the mirror is P(S >= s), the smaller tail here (most differences are positive), so it is
	// half the two-sided p; and the patterns whose sum ties s count on both sides, so the two tails add up to more
	// than 1.
	if a.TwoSided != b.TwoSided || b.Less != a.TwoSided/2 || !(a.Less+b.Less > 1) {
		t.Errorf("SignFlip(d) = %+v, SignFlip(-d) = %+v", a, b)
	}
}

// TestSignFlipMonteCarloTable: the four-at-a-time tables sum the same patterns as one sign at a time. With
// resamples drawn from a fixed stream, the table's sums are checked against sums computed directly from the same
// bits.
func TestSignFlipMonteCarloTable(t *testing.T) {
	for _, n := range []int{1, 3, 4, 5, 63, 64, 65, 130} {
		mags := make([]float64, n)
		groups := make([]signGroup, n)
		for i := range mags {
			mags[i] = float64(i+1) / 7
			groups[i] = signGroup{mag: mags[i], count: 1}
		}
		// One resample: observed is the sum of the pattern the stream will draw, so P(S <= observed) counts it.
		d := newDraws(9, streamSignFlip)
		var s float64
		for c := 0; c < (n+3)/4; c += 16 {
			w := d.uint64()
			for i := 4 * c; i < min(4*c+64, n); i++ {
				s += mags[i] * float64(1-2*int(w>>(i-4*c)&1))
			}
		}
		less, greater := monteCarloTails(groups, s, 1e-12, 1, 9)
		if less != 1 || greater != 1 {
			t.Errorf("n = %d: the drawn pattern's sum %v was not counted on both sides (%v, %v)", n, s, less, greater)
		}
		less, greater = monteCarloTails(groups, s-1e-6, 1e-12, 1, 9)
		if less != 0.5 || greater != 1 {
			t.Errorf("n = %d: a sum just below the drawn one counted %v, %v; want 0.5, 1", n, less, greater)
		}
	}
}

// FuzzSignFlip checks the grouped exact enumeration against a brute force over every sign pattern, on integer
// differences (pass-rate numerators, scaled by 1/5 for the test and kept whole for the brute force, so its counts
// are exact): ties, zeros and mixed magnitudes in any combination.
func FuzzSignFlip(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Add([]byte{251, 251, 251, 5, 0, 0, 7})
	f.Add([]byte{1, 255, 2, 254, 3, 253, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 14 {
			return
		}
		nums := make([]int, len(data))
		diffs := make([]float64, len(data))
		for i, b := range data {
			nums[i] = int(int8(b)) % 6 // -5..5 trials
			diffs[i] = float64(nums[i]) / 5
		}
		got, err := SignFlip(diffs, SignFlipOptions{})
		if err != nil {
			t.Fatal(err)
		}
		observed := 0
		for _, m := range nums {
			observed += m
		}
		var less, greater int
		for pattern := range 1 << len(nums) {
			s := 0
			for i, m := range nums {
				if m < 0 {
					m = -m
				}
				if pattern>>i&1 == 1 {
					m = -m
				}
				s += m
			}
			if s <= observed {
				less++
			}
			if s >= observed {
				greater++
			}
		}
		total := float64(int(1) << len(nums))
		wantLess := float64(less) / total
		wantTwo := math.Min(1, 2*math.Min(wantLess, float64(greater)/total))
		if !got.Exact || !near(got.Less, wantLess, 1e-12) || !near(got.TwoSided, wantTwo, 1e-12) {
			t.Errorf("differences %v: %+v; brute force one-sided %v, two-sided %v", diffs, got, wantLess, wantTwo)
		}
	})
}
