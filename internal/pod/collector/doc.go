// Package collector is the collector of a run's pod: it waits for the runner container's end (the
// runner-end FIFO and the launcher's report framed at its end), copies the runner's output into its own snapshot
// (internal/safefile: the runner's files are hostile data), hands the snapshot to the judge containers and
// accepts only the verdict frames it asked them for, runs the collection pipeline with a Sink that builds the
// status section and result chunks, decides the collection's outcome (internal/outcome) and persists it: result
// ConfigMaps or bucket objects, then its own fields of the EvalRun's status by server-side apply, with retries,
// and a termination message as the manager's fallback.
package collector
