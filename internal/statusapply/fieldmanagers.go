package statusapply

// Field managers: who writes which part of an EvalRun's or EvalSchedule's status with server-side apply (each
// function of this package builds one's apply body; docs/design/storage-and-budgets.md says who writes which field).
const (
	FieldManagerManager   = "evalrun-manager"
	FieldManagerCollector = "evalrun-collector"
	// FieldManagerMerge is the manager's field manager for the results section it merges from the shards of a
	// sharded or resumed run (the fields a single pod's collector writes otherwise).
	FieldManagerMerge = "evalrun-merge"
	// FieldManagerSchedule is the field manager of an EvalSchedule's status.
	FieldManagerSchedule = "evalschedule-manager"
)
