package assess

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	evalsv1alpha1 "github.com/evalrun-operator/evalrun-operator/api/v1alpha1"
)

func TestParseSchedule(t *testing.T) {
	for _, tc := range []struct {
		schedule, zone, err string
	}{
		{schedule: "*/5 * * * *"},
		{schedule: "@daily", zone: "Europe/Paris"},
		{schedule: "61 * * * *", err: "end of range (61) above maximum (59)"},
		{schedule: "* * * *", err: "expected exactly 5 fields"},
		{schedule: "CRON_TZ=UTC * * * * *", err: "use spec.timeZone"},
		{schedule: "0 2 * * *", zone: "Mars/Olympus", err: `timeZone "Mars/Olympus"`},
	} {
		spec := &evalsv1alpha1.EvalScheduleSpec{Schedule: tc.schedule}
		if tc.zone != "" {
			spec.TimeZone = ptr.To(tc.zone)
		}
		_, err := ParseSchedule(spec)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseSchedule(%q, %q) = %v; want an error containing %q", tc.schedule, tc.zone, err, tc.err)
		}
	}
}

// TestMostRecent: the latest scheduled time in (earliest, now] and how many there were, in the schedule's time
// zone; a daily 02:00 in Paris is 01:00 UTC in winter.
func TestMostRecent(t *testing.T) {
	paris, err := ParseSchedule(&evalsv1alpha1.EvalScheduleSpec{Schedule: "0 2 * * *", TimeZone: ptr.To("Europe/Paris")})
	if err != nil {
		t.Fatal(err)
	}
	earliest := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 26, 0, 59, 0, 0, time.UTC)
	last, n := MostRecent(paris, earliest, now)
	if want := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC); !last.Equal(want) || n != 5 {
		t.Errorf("MostRecent = %v, %d; want %v, 5", last, n, want)
	}
	if last, n := MostRecent(paris, now, now.Add(time.Minute)); !last.Equal(now.Add(time.Minute)) || n != 1 {
		t.Errorf("a time exactly at now: %v, %d", last, n)
	}
	if last, n := MostRecent(paris, now.Add(time.Minute), now.Add(2*time.Minute)); !last.IsZero() || n != 0 {
		t.Errorf("nothing due: %v, %d", last, n)
	}
	// An every-minute schedule after a year away: bounded work, the latest time found.
	every, _ := ParseSchedule(&evalsv1alpha1.EvalScheduleSpec{Schedule: "* * * * *"})
	year := now.Add(-365 * 24 * time.Hour)
	if last, n := MostRecent(every, year, now); !last.Equal(now) || n != 365*24*60 {
		t.Errorf("a year of minutes: %v, %d", last, n)
	}
	if got := ScheduledRunName("nightly", time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)); got != "nightly-29926140" {
		t.Errorf("ScheduledRunName = %s", got)
	}
}
