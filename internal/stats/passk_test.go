package stats

import (
	"math/big"
	"testing"
)

func TestPassK(t *testing.T) {
	tests := []struct {
		name        string
		n, c, k     int
		passAt, hat float64
		wantErr     bool
	}{
		// pass@2 = 1 - C(2,2)/C(5,2) = 0.9; pass^2 = C(3,2)/C(5,2) = 0.3.
		{name: "3 of 5, k = 2", n: 5, c: 3, k: 2, passAt: 0.9, hat: 0.3},
		{name: "3 of 5, k = 1", n: 5, c: 3, k: 1, passAt: 0.6, hat: 0.6},
		{name: "3 of 5, k = 5", n: 5, c: 3, k: 5, passAt: 1, hat: 0},
		{name: "5 of 5, k = 5", n: 5, c: 5, k: 5, passAt: 1, hat: 1},
		{name: "none of 5, k = 5", n: 5, c: 0, k: 5, passAt: 0, hat: 0},
		{name: "4 of 5, k = 5", n: 5, c: 4, k: 5, passAt: 1, hat: 0},
		{name: "one trial passed", n: 1, c: 1, k: 1, passAt: 1, hat: 1},
		{name: "k = 0", n: 5, c: 3, k: 0, wantErr: true},
		{name: "k > n", n: 5, c: 3, k: 6, wantErr: true},
		{name: "c > n", n: 5, c: 6, k: 1, wantErr: true},
		{name: "no trials", n: 0, c: 0, k: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err1 := PassAtK(tt.n, tt.c, tt.k)
			hat, err2 := PassHatK(tt.n, tt.c, tt.k)
			if (err1 != nil) != tt.wantErr || (err2 != nil) != tt.wantErr {
				t.Fatalf("errors %v, %v; want error %v", err1, err2, tt.wantErr)
			}
			if !near(at, tt.passAt, 1e-15) || !near(hat, tt.hat, 1e-15) {
				t.Errorf("pass@%d = %v, pass^%d = %v; want %v, %v", tt.k, at, tt.k, hat, tt.passAt, tt.hat)
			}
		})
	}
}

// TestPassKLarge: the product forms stay accurate where the binomial coefficients overflow float64 (C(2000, 1000)
// is about 10^600), against exact rationals.
func TestPassKLarge(t *testing.T) {
	for _, p := range [][3]int{{2000, 1000, 1000}, {2000, 3, 1500}, {2000, 1999, 2}, {1000, 500, 10}, {3000, 2990, 7}} {
		n, c, k := int64(p[0]), int64(p[1]), int64(p[2])
		binom := func(a, b int64) *big.Int { return new(big.Int).Binomial(a, b) }
		wantHat, _ := new(big.Rat).SetFrac(binom(c, k), binom(n, k)).Float64()
		miss := new(big.Rat).SetFrac(binom(n-c, k), binom(n, k))
		wantAt, _ := new(big.Rat).Sub(big.NewRat(1, 1), miss).Float64()
		if n-c < k {
			wantAt = 1
		}
		if c < k {
			wantHat = 0
		}
		at, _ := PassAtK(p[0], p[1], p[2])
		hat, _ := PassHatK(p[0], p[1], p[2])
		if !near(at, wantAt, 1e-12) || !near(hat, wantHat, 1e-12) {
			t.Errorf("n=%d c=%d k=%d: pass@k %.17g, pass^k %.17g; want %.17g, %.17g", n, c, k, at, hat, wantAt, wantHat)
		}
	}
}

// TestPassKOrder: pass^k <= pass@1 <= pass@k, pass@k grows with k and pass^k falls.
func TestPassKOrder(t *testing.T) {
	const n = 9
	for c := 0; c <= n; c++ {
		prevAt, prevHat := -1.0, 2.0
		for k := 1; k <= n; k++ {
			at, _ := PassAtK(n, c, k)
			hat, _ := PassHatK(n, c, k)
			p1 := float64(c) / n
			if hat > p1+1e-15 || at < p1-1e-15 || at < prevAt-1e-15 || hat > prevHat+1e-15 {
				t.Errorf("n=%d c=%d k=%d: pass@k %v, pass^k %v (pass@1 %v, previous %v, %v)", n, c, k, at, hat, p1, prevAt, prevHat)
			}
			prevAt, prevHat = at, hat
		}
	}
}
