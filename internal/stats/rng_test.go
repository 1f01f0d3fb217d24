package stats

import (
	"math"
	"math/bits"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDrawsStream pins the generator: SplitMix64 from state 0 gives the published first outputs, so no change to
// draws can silently move every seeded p-value and interval.
func TestDrawsStream(t *testing.T) {
	d := &draws{}
	got := []uint64{d.uint64(), d.uint64(), d.uint64()}
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SplitMix64 from 0 (-want +got):\n%s", diff)
	}
	if a, b := newDraws(1, streamSignFlip).uint64(), newDraws(1, streamBootstrap).uint64(); a == b {
		t.Error("the sign-flip and bootstrap streams of one seed start alike")
	}
}

// TestDrawsOnes: below 64, ones(k) counts exactly the next k bits of the stream, read in order across word
// boundaries; 64 or more bits take whole fresh words.
func TestDrawsOnes(t *testing.T) {
	for _, sizes := range [][]int{{1, 1, 1}, {63, 1, 5}, {5, 60, 3, 63, 60}, {33, 33, 33}} {
		d, ref := newDraws(2, 0), newDraws(2, 0)
		var word uint64
		left := 0
		for _, k := range sizes {
			want := 0
			for range k {
				if left == 0 {
					word, left = ref.uint64(), 64
				}
				want += int(word & 1)
				word >>= 1
				left--
			}
			if got := d.ones(k); got != want {
				t.Errorf("sizes %v: ones(%d) = %d, the stream's next %d bits hold %d", sizes, k, got, k, want)
			}
		}
	}
	d, ref := newDraws(5, 0), newDraws(5, 0)
	if got, want := d.ones(130), bits.OnesCount64(ref.uint64())+bits.OnesCount64(ref.uint64())+bits.OnesCount64(ref.uint64()&3); got != want {
		t.Errorf("ones(130) = %d, want two words and two bits: %d", got, want)
	}
	// Statistically: ones(k) over many draws averages k/2 with variance k/4.
	d = newDraws(3, 0)
	const n, k = 20000, 37
	var sum, sumSq float64
	for range n {
		v := float64(d.ones(k))
		sum += v
		sumSq += v * v
	}
	mean := sum / n
	variance := sumSq/n - mean*mean
	if math.Abs(mean-k/2.0) > 4*math.Sqrt(k/4.0/n) || math.Abs(variance-k/4.0) > 0.05*k/4.0 {
		t.Errorf("ones(%d): mean %v, variance %v; want %v, %v", k, mean, variance, k/2.0, k/4.0)
	}
}

// TestDrawsIndex: index(n) stays in [0, n) and is uniform (chi-square over 7 cells, 70,000 draws; the 0.9999
// quantile of chi-square with 6 degrees of freedom is 27.9), also for an n whose rejection zone is large.
func TestDrawsIndex(t *testing.T) {
	for _, n := range []uint32{1, 7, 3 << 30} {
		d := newDraws(4, 0)
		const draws = 70000
		cells := make([]float64, 7)
		for range draws {
			i := d.index(n)
			if i >= n {
				t.Fatalf("index(%d) = %d", n, i)
			}
			cells[uint64(i)*7/uint64(n)]++
		}
		if n == 1 {
			continue
		}
		var chi2 float64
		for _, c := range cells {
			chi2 += (c - draws/7.0) * (c - draws/7.0) / (draws / 7.0)
		}
		if chi2 > 27.9 {
			t.Errorf("index(%d): chi-square %v over 7 cells %v", n, chi2, cells)
		}
	}
}
