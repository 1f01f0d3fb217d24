package stats

import "math/bits"

// streamSignFlip and streamBootstrap tell the sign-flip test's draws from the bootstrap's, so one seed given to
// both does not correlate them.
const (
	streamSignFlip  uint64 = 0x5349474e464c4950 // "SIGNFLIP"
	streamBootstrap uint64 = 0x424f4f5453545250 // "BOOTSTRP"
)

// draws is a seeded stream of random bits: SplitMix64 (Steele, Lea and Flood 2014), a Weyl sequence through a
// 64-bit mixing function, which passes BigCrush. It is ours, so a seed's stream never changes with a Go release
// (TestDrawsStream pins its first outputs to the published ones), and it is the cheapest stable generator at
// hand: the Monte Carlo and bootstrap loops spend most of their time drawing.
type draws struct {
	state uint64
	// buf holds n unused random bits (its low bits).
	buf uint64
	n   uint
}

const splitMixGamma = 0x9e3779b97f4a7c15

// newDraws starts the stream of (seed, stream) at a mixed seed XOR stream: streams of one seed start at
// unrelated points of SplitMix64's single cycle of 2^64, so their draws do not overlap in practice.
func newDraws(seed, stream uint64) *draws {
	return &draws{state: splitMix(seed) ^ stream}
}

// splitMix is SplitMix64's output function.
func splitMix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// uint64 returns 64 fresh random bits.
func (d *draws) uint64() uint64 {
	d.state += splitMixGamma
	return splitMix(d.state)
}

// ones returns how many of k fresh random bits are set: a draw of Binomial(k, 1/2).
func (d *draws) ones(k int) int {
	count := 0
	for k >= 64 {
		count += bits.OnesCount64(d.uint64())
		k -= 64
	}
	if k == 0 {
		return count
	}
	if d.n < uint(k) {
		// Too few bits left: use the leftovers, then a fresh word for the rest.
		count += bits.OnesCount64(d.buf)
		k -= int(d.n)
		d.buf, d.n = d.uint64(), 64
	}
	count += bits.OnesCount64(d.buf & (1<<uint(k) - 1))
	d.buf >>= uint(k)
	d.n -= uint(k)
	return count
}

// index returns a uniform integer in [0, n) for 0 < n < 2^32, from 32 random bits (Lemire's multiply-shift with
// rejection, so every index is exactly equally likely): two indexes per output. The common case is small enough
// to inline into the bootstrap's loop.
func (d *draws) index(n uint32) uint32 {
	if d.n >= 32 {
		m := uint64(uint32(d.buf)) * uint64(n)
		if uint32(m) >= n {
			d.buf >>= 32
			d.n -= 32
			return uint32(m >> 32)
		}
	}
	return d.indexSlow(n)
}

// indexSlow is index's whole loop: a fresh word, and the rejection of a low half below (2^32 - n) mod n.
func (d *draws) indexSlow(n uint32) uint32 {
	for {
		if d.n < 32 {
			d.buf, d.n = d.uint64(), 64
		}
		m := uint64(uint32(d.buf)) * uint64(n)
		d.buf >>= 32
		d.n -= 32
		// A low half below (2^32 - n) mod n would make some indexes likelier: draw again.
		if low := uint32(m); low >= n || low >= -n%n {
			return uint32(m >> 32)
		}
	}
}
