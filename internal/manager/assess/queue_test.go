package assess

import (
	"testing"
	"time"
)

// TestPositionRecheck: the runs at the head of a queue look again every QueuePositionRecheck, each further step
// of positionsPerStep waits one interval more, up to maxPositionRecheck; 1,000 waiting runs recheck about six
// times a second in all, against 100 at one pace.
func TestPositionRecheck(t *testing.T) {
	for pos, want := range map[int32]time.Duration{0: 10 * time.Second, 1: 10 * time.Second, 10: 10 * time.Second,
		11: 20 * time.Second, 25: 30 * time.Second, 295: 5 * time.Minute, 1000: 5 * time.Minute} {
		if got := PositionRecheck(pos); got != want {
			t.Errorf("PositionRecheck(%d) = %s, want %s", pos, got, want)
		}
	}
	var perSecond float64
	for pos := int32(1); pos <= 1000; pos++ {
		perSecond += 1 / PositionRecheck(pos).Seconds()
	}
	if perSecond > 8 {
		t.Errorf("1,000 waiting runs recheck %.1f times a second, want at most 8", perSecond)
	}
	t.Logf("1,000 waiting runs recheck %.2f times a second (one pace: %.0f)", perSecond, 1000/QueuePositionRecheck.Seconds())
}
