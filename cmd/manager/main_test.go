package main

import (
	"strings"
	"testing"
	"time"
)

// TestLeaderElectionValidate: the defaults are valid; a lease not longer than the renew deadline, a renew deadline
// within 1.2 retry periods (what client-go's leader elector refuses at start) or a zero duration are errors naming
// the flags.
func TestLeaderElectionValidate(t *testing.T) {
	def := leaderElection{lease: defaultLeaseDuration, renew: defaultRenewDeadline, retry: defaultRetryPeriod}
	wide := leaderElection{lease: 60 * time.Second, renew: 40 * time.Second, retry: 5 * time.Second}
	for _, ok := range []leaderElection{def, wide} {
		if err := ok.validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for _, tc := range []struct {
		e    leaderElection
		want string
	}{
		{leaderElection{lease: 10 * time.Second, renew: 10 * time.Second, retry: 2 * time.Second}, "--leader-elect-lease-duration (10s) must be longer"},
		{leaderElection{lease: 15 * time.Second, renew: 10 * time.Second, retry: 9 * time.Second}, "1.2 times --leader-elect-retry-period (9s)"},
		{leaderElection{lease: 15 * time.Second, renew: 10 * time.Second}, "must be above 0"},
		{leaderElection{lease: -time.Second, renew: 10 * time.Second, retry: 2 * time.Second}, "must be above 0"},
	} {
		err := tc.e.validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.e, err, tc.want)
		}
	}
}
