// Package controller holds the manager's reconcilers, thin loops of observe -> assess -> act: EvalRun (observe in
// numbered steps, through the eval source (internal/manager/evalsource) and the collections
// (internal/manager/collect); the pure Classify and ClassifyShards (internal/manager/assess); status written once
// and only when changed, events after) and EvalSchedule. What they act on is theirs: creating a run's children
// (built by internal/manager/children) and the pinned copies, the merged results' write, stopping shards and Jobs,
// new attempts, the finalizer's clean-up. Its integration tests are in test/integration/controller.
package controller
