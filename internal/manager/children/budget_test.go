package children

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// A shard's share of a budget is ceil(budget / shards); no budget stays none.
func TestShardBudget(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		shards int
		want   int64
	}{{0, 4, 0}, {10, 1, 10}, {10, 3, 4}, {10, 10, 1}, {3, 8, 1}, {1_000_000_000_000, 1000, 1_000_000_000}} {
		if got := shardBudget(tc.budget, tc.shards); got != tc.want {
			t.Errorf("shardBudget(%d, %d) = %d, want %d", tc.budget, tc.shards, got, tc.want)
		}
	}
}

// A pod's share of spec.target.maxCostUSD is ceil(budget / shards) nanodollars; no budget stays none; a zero
// budget stays zero (the first reported cost passes it).
func TestShardCostBudget(t *testing.T) {
	for _, tc := range []struct {
		budget *string
		shards int
		want   *int64
	}{
		{nil, 4, nil},
		{ptr.To("1"), 1, ptr.To[int64](1_000_000_000)},
		{ptr.To("1"), 3, ptr.To[int64](333_333_334)},
		{ptr.To("0"), 3, ptr.To[int64](0)},
		{ptr.To("0.000000001"), 2, ptr.To[int64](1)},
		{ptr.To("999999999999.5"), 2, ptr.To[int64](4_611_686_018_427_387_904)},
		{ptr.To("-1"), 1, nil},
	} {
		if diff := cmp.Diff(tc.want, shardCostBudget(tc.budget, tc.shards)); diff != "" {
			t.Errorf("shardCostBudget(%v, %d) (-want +got):\n%s", ptr.Deref(tc.budget, "<nil>"), tc.shards, diff)
		}
	}
}
