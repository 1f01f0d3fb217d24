package stats

import (
	"math/bits"
	"math/rand/v2"
)

// streamSignFlip and streamBootstrap tell the sign-flip test's draws from the bootstrap's, so one seed given to
// both does not correlate them.
const (
	streamSignFlip  uint64 = 0x5349474e464c4950 // "SIGNFLIP"
	streamBootstrap uint64 = 0x424f4f5453545250 // "BOOTSTRP"
)

// draws is a seeded stream of random bits: math/rand/v2's PCG, whose output for a seed the Go project keeps
// stable, so a result is the same on every machine and release.
type draws struct {
	pcg *rand.PCG
	// buf holds n unused random bits (its low bits).
	buf uint64
	n   uint
}

func newDraws(seed, stream uint64) *draws {
	return &draws{pcg: rand.NewPCG(seed, stream)}
}

// uint64 returns 64 fresh random bits.
func (d *draws) uint64() uint64 { return d.pcg.Uint64() }

// ones returns how many of k fresh random bits are set: a draw of Binomial(k, 1/2).
func (d *draws) ones(k int) int {
	count := 0
	for k >= 64 {
		count += bits.OnesCount64(d.pcg.Uint64())
		k -= 64
	}
	if k == 0 {
		return count
	}
	if d.n < uint(k) {
		// Too few bits left: use the leftovers, then a fresh word for the rest.
		count += bits.OnesCount64(d.buf)
		k -= int(d.n)
		d.buf, d.n = d.pcg.Uint64(), 64
	}
	count += bits.OnesCount64(d.buf & (1<<uint(k) - 1))
	d.buf >>= uint(k)
	d.n -= uint(k)
	return count
}

// index returns a uniform integer in [0, n) for 0 < n < 2^32, from 32 random bits (Lemire's multiply-shift with
// rejection, so every index is exactly equally likely): two indexes per PCG output.
func (d *draws) index(n uint32) uint32 {
	for {
		if d.n < 32 {
			d.buf, d.n = d.pcg.Uint64(), 64
		}
		x := uint32(d.buf)
		d.buf >>= 32
		d.n -= 32
		m := uint64(x) * uint64(n)
		low := uint32(m)
		if low >= n {
			return uint32(m >> 32)
		}
		// low < n: reject the draws that would make some indexes more likely ((2^32 - n) mod n of them).
		if low >= -n%n {
			return uint32(m >> 32)
		}
	}
}
