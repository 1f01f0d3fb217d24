package podwire

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCaseDurationsRoundTrip(t *testing.T) {
	in := []int64{0, 1, -1, 127, 128, 2_100_000, -5, 1 << 41}
	got, err := DecodeCaseDurations(EncodeCaseDurations(in), len(in)+2)
	if err != nil {
		t.Fatal(err)
	}
	// Negative: not invoked (-1); past the bound: clamped; positions past the encoding: not measured.
	want := []int64{0, 1, -1, 127, 128, 2_100_000, -1, 1 << 40, -1, -1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("durations (-want +got):\n%s", diff)
	}
	if got, err := DecodeCaseDurations("", 3); err != nil || cmp.Diff([]int64{-1, -1, -1}, got) != "" {
		t.Errorf("empty: %v, %v", got, err)
	}
}

// The report is decoded as hostile data: nothing is trusted from an encoding that is not what the launcher writes.
func TestDecodeCaseDurationsRefuses(t *testing.T) {
	enc := func(b ...byte) string { return base64.RawStdEncoding.EncodeToString(b) }
	for name, s := range map[string]string{
		"not base64":          "!!!",
		"padded":              base64.StdEncoding.EncodeToString([]byte{1}),
		"a cut varint":        enc(0x80),
		"more than the cases": enc(1, 1, 1),
		"past the bound":      enc(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"too long":            strings.Repeat("A", MaxCaseDurationsBytes+4),
	} {
		if got, err := DecodeCaseDurations(s, 2); err == nil {
			t.Errorf("%s: decoded %v", name, got)
		}
	}
}

// 100,000 cases of up to 35 minutes fit the bound with room to spare; an encoding past it is left out.
func TestCaseDurationsBound(t *testing.T) {
	ms := make([]int64, 100_000)
	for i := range ms {
		ms[i] = 2_000_000 // 33 minutes: 3-byte varints
	}
	s := EncodeCaseDurations(ms)
	if s == "" || len(s) > 400_000 {
		t.Errorf("100,000 cases take %d bytes", len(s))
	}
	if EncodeCaseDurations(make([]int64, MaxCaseDurationsBytes)) != "" {
		t.Error("an encoding past the bound was kept")
	}
}

func FuzzDecodeCaseDurations(f *testing.F) {
	f.Add(EncodeCaseDurations([]int64{1, -1, 300}), 3)
	f.Add("gA", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got, err := DecodeCaseDurations(s, n)
		if err != nil {
			return
		}
		if len(got) != n {
			t.Fatalf("%d durations for %d cases", len(got), n)
		}
		for _, d := range got {
			if d < -1 || d > maxCaseDurationMs {
				t.Fatalf("duration %d out of bounds", d)
			}
		}
	})
}

func BenchmarkCaseDurations100k(b *testing.B) {
	ms := make([]int64, 100_000)
	for i := range ms {
		ms[i] = int64(i*37) % 600_000
	}
	b.ReportAllocs()
	for b.Loop() {
		s := EncodeCaseDurations(ms)
		if _, err := DecodeCaseDurations(s, len(ms)); err != nil {
			b.Fatal(err)
		}
	}
}
