// Package controller holds the manager's reconcilers: EvalRun (observe in numbered steps, the pure Classify and
// ClassifyShards, status written once and only when changed, events after) and EvalSchedule, with the pure
// builders of every child (the eval ConfigMap, the collector's Role and RoleBinding, the result ConfigMaps, the
// Job and its pod) and the I/O around them (bucket pinning, merging shards, resume, baselines, re-runs). Its
// integration tests are in test/integration/controller.
package controller
