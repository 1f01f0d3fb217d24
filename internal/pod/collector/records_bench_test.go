package collector

import (
	"fmt"
	"testing"
	"time"

	"github.com/evalrun-operator/evalrun-operator/internal/outcome"
	"github.com/evalrun-operator/evalrun-operator/internal/podwire"
)

// BenchmarkGatherKeepRecords is BenchmarkGather with the records kept, in record ConfigMaps (64, the most a shard
// has) and in a bucket object: it reports the compressed bytes per kept case, how many did not fit the budget, and
// (ConfigMaps) the peak RSS and heap of a fresh process doing one Gather, as BenchmarkGather does.
func BenchmarkGatherKeepRecords(b *testing.B) {
	base, out, size := benchWorkload(b)
	for _, where := range []string{"ConfigMaps", "Bucket"} {
		b.Run(where, func(b *testing.B) {
			in := keepRecordsInput(base, out, where)
			g := benchGather(b, in.Config, size, func() GatherInput { return in })
			reportRecords(b, g, size)
			if where == "ConfigMaps" {
				reportRSS(b, in.Config, "peak-RSS-MiB")
			}
		})
	}
}

// keepRecordsInput is the input of a collection of the reference workload (base, out) that keeps its records where
// ("ConfigMaps": in 64 record ConfigMaps, the most a shard has; "Bucket": in a bucket object), on a copy of base.
func keepRecordsInput(base *podwire.RunConfig, out podwire.Output, where string) GatherInput {
	cfg := *base
	cfg.SharedEvaluators = false
	cfg.Records = &podwire.Records{}
	in := GatherInput{Config: &cfg, Output: out, EndCause: outcome.EndEnded, Now: time.Now()}
	if where == "Bucket" {
		in.ResultsObject, in.RecordsObject = "s3://bench/results.jsonl.gz", "s3://bench/records.jsonl.gz"
	} else {
		cfg.Records.ConfigMaps = make([]string, podwire.MaxResultConfigMaps)
		for i := range cfg.Records.ConfigMaps {
			cfg.Records.ConfigMaps[i] = fmt.Sprintf("bench-records-%d", i)
		}
	}
	return in
}

// reportRecords reports a collection's kept records: the compressed bytes per kept case, how many were kept and
// how many did not fit the budget, and the workload's output bytes per case (size over the cases).
func reportRecords(b *testing.B, g *Gathered, size int64) {
	st := g.Output.Section.Records
	if st == nil || st.Kept == 0 {
		b.Fatalf("no records kept: %+v", st)
	}
	b.ReportMetric(float64(st.Bytes)/float64(st.Kept), "record-B/kept-case")
	b.ReportMetric(float64(st.Kept), "kept")
	b.ReportMetric(float64(st.NotKept), "not-kept")
	b.ReportMetric(float64(size)/float64(g.Summary.Total), "output-B/case")
}
