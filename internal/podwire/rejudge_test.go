package podwire

import "testing"

// TestRejudgeValid: a re-judge names its source and exactly one place for its records that the pod can read.
func TestRejudgeValid(t *testing.T) {
	bucket := &Bucket{Endpoint: "http://s3.example", Bucket: "b"}
	cms := []string{"nightly-evalrun-records-0"}
	tests := []struct {
		name string
		r    Rejudge
		cfg  RunConfig
		want bool
	}{
		{name: "ConfigMaps", r: Rejudge{From: "nightly", FromUID: "u", ConfigMaps: cms}, want: true},
		{name: "bucket", r: Rejudge{From: "nightly", FromUID: "u", InBucket: true}, cfg: RunConfig{Bucket: bucket}, want: true},
		{name: "no source", r: Rejudge{ConfigMaps: cms}},
		{name: "no uid", r: Rejudge{From: "nightly", ConfigMaps: cms}},
		{name: "nowhere", r: Rejudge{From: "nightly", FromUID: "u"}},
		{name: "both", r: Rejudge{From: "nightly", FromUID: "u", ConfigMaps: cms, InBucket: true}, cfg: RunConfig{Bucket: bucket}},
		{name: "bucket, the run none", r: Rejudge{From: "nightly", FromUID: "u", InBucket: true}},
		{name: "ConfigMaps without a token", r: Rejudge{From: "nightly", FromUID: "u", ConfigMaps: cms}, cfg: RunConfig{BucketOnly: true, Bucket: bucket}},
	}
	for _, tc := range tests {
		if got := tc.r.valid(&tc.cfg); got != tc.want {
			t.Errorf("%s: valid = %v, want %v", tc.name, got, tc.want)
		}
	}
}
