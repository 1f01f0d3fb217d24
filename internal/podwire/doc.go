// Package podwire is the wire contract of a run's pod, defined and loaded in one place: what the manager, which
// builds the pod, and the binaries inside it (install, launcher, collector, judge runner) agree on. Pure Go, so every
// side and its tests share one definition:
//
//   - paths.go: volumes and the paths in them, environment variables, container names and uids;
//   - runconfig.go, runnerconfig.go, load.go: run.json (RunConfig, the trusted side's configuration, written by the
//     manager), launch.json (RunnerConfig, the launcher's), and their loading, with the eval file's;
//   - handshake.go, runnerend.go, reportframe.go, install.go, logline.go: notes written atomically and waited for,
//     the runner-end FIFO (created, held, watched; the launcher's report framed at its end), an atomic binary copy;
//   - judgeplan.go, judgeframe.go, judgeend.go: which judge container judges which cases and may report which
//     invocations (the judge runner and the collector compute the same plan), and the judge-end FIFOs (a key, then
//     HMAC-authenticated, numbered, atomic chunks of verdict frames);
//   - report.go, termination.go: the launcher's report and the collector's termination message.
//
// The pod keeps the runner's reach and the trusted side apart: the runner container mounts only its output volume
// (read-write), the view volume (its eval file and RunnerConfig, written by install) and the bin volume (the launcher
// and the FIFOs; both read-only), never the judge-bin volume (the judge runner). Everything the collector or a judge
// trusts or judges by (run.json, the eval file, the shard's file) lives in volumes the runner container does not
// mount at all. The package links no judging and no object-store or API client code: the launcher, which runs
// beside the runner, is built on it (it speaks internal/verdict's vocabulary in judge frames, nothing more).
package podwire
