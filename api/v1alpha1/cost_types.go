package v1alpha1

// What a run spends: the runner's reported usage, the LLM judges' usage, and the budgets that stop spending
// (docs/operations.md#cost, docs/judging.md#budgets).

// ConditionBudgetExceeded is True when a budget of the run (spec.judging.llm.maxRequests or maxTokens,
// spec.target.maxCostUSD) stopped
// spending before the run was done; its reason names which. It is set only on
// runs that have a budget. It never decides a verdict: Passed still comes from the judged results.
const ConditionBudgetExceeded = "BudgetExceeded"

// Reasons of the BudgetExceeded condition.
const (
	// ReasonJudgeRequestBudgetSpent: spec.judging.llm.maxRequests requests were sent; the LLM evaluators not yet
	// judged are Skipped and their cases are Errors (status.summary.budgetUnjudged).
	ReasonJudgeRequestBudgetSpent = "JudgeRequestBudgetSpent"
	// ReasonJudgeTokenBudgetSpent: the replies' tokens reached spec.judging.llm.maxTokens; the LLM evaluators not
	// yet judged are Skipped and their cases are Errors (status.summary.budgetUnjudged).
	ReasonJudgeTokenBudgetSpent = "JudgeTokenBudgetSpent"
	// ReasonRunnerCostBudgetSpent: the cost the runner's records reported passed spec.target.maxCostUSD and the
	// launcher stopped the runner (the run fails with CostBudgetExceeded).
	ReasonRunnerCostBudgetSpent = "RunnerCostBudgetSpent"
	// ReasonLandlockConfined: every code_judge script ran under Landlock ABI 6 or above (files, TCP, signals and
	// abstract unix sockets confined).
	ReasonLandlockConfined = "LandlockConfined"
	// ReasonLandlockUnavailable: a node's kernel has no Landlock; its code_judge scripts ran unconfined (a Warning
	// event says so).
	ReasonLandlockUnavailable = "LandlockUnavailable"
	// ReasonLandlockPartial: a node's Landlock is older than ABI 6: its scripts' files were confined, but not
	// (below 4) TCP or (below 6) signals and abstract unix sockets.
	ReasonLandlockPartial = "LandlockPartial"
	// ReasonWithinBudget: the run has a budget and stayed within it.
	ReasonWithinBudget = "WithinBudget"
)

// BudgetKind names one budget of a run.
// +kubebuilder:validation:Enum=JudgeRequests;JudgeTokens;RunnerCost
type BudgetKind string

const (
	// BudgetJudgeRequests is spec.judging.llm.maxRequests.
	BudgetJudgeRequests BudgetKind = "JudgeRequests"
	// BudgetJudgeTokens is spec.judging.llm.maxTokens.
	BudgetJudgeTokens BudgetKind = "JudgeTokens"
	// BudgetRunnerCost is spec.target.maxCostUSD.
	BudgetRunnerCost BudgetKind = "RunnerCost"
)

// RunCost is what a run (or one shard of it) spent: the runner's usage as its records report it, and the LLM
// judges' usage as the endpoint reports it. The collector sums it as it builds the results; a sharded or resumed
// run's is the manager's sum over every stored result. Every figure is summed exactly (see RunnerCost) and
// saturates at its maximum instead of wrapping: a figure at the maximum means "at least".
type RunCost struct {
	// runner sums what the runner reported for the cases this run ran (carried results are in carried). Unset
	// when no case had a record.
	// +optional
	Runner *RunnerCost `json:"runner,omitempty"`

	// judges sums the model usage of the LLM judges for the cases this run judged (the same figures as
	// summary.judgeUsage less carried results'). Unset when no model was called.
	// +optional
	Judges *JudgeUsage `json:"judges,omitempty"`

	// carried sums, in a resumed run, the same figures over the results carried from the earlier run
	// (status.resume.from): that run spent them, not this one; runner + carried.runner is what all the results
	// cost. Unset when nothing was carried.
	// +optional
	Carried *CarriedCost `json:"carried,omitempty"`

	// budgetsExceeded names the budgets this run (or shard) reached: JudgeRequests, JudgeTokens, RunnerCost. The
	// BudgetExceeded condition says the same with a message.
	// +listType=set
	// +kubebuilder:validation:MaxItems=3
	// +optional
	BudgetsExceeded []BudgetKind `json:"budgetsExceeded,omitempty"`
}

// CarriedCost is what the results a resumed run carried cost the run that produced them.
type CarriedCost struct {
	// runner sums what the runner reported for the carried cases. Unset when none had a record.
	// +optional
	Runner *RunnerCost `json:"runner,omitempty"`

	// judges sums the LLM judges' usage recorded with the carried results. Unset when none called a model.
	// +optional
	Judges *JudgeUsage `json:"judges,omitempty"`
}

// RunnerCost sums the usage the runner reported in its records (AgentV's token_usage, cost_usd and duration_ms),
// each with the number of cases that reported it. The records are the runner's, so untrusted: a value the parser
// refuses (not a number, negative, NaN, infinite) counts as not reported; each token count and duration is
// rounded to an integer and each cost to a nanodollar (1e-9 USD), then summed as integers, so the sums are exact,
// do not depend on the order of the cases or shards, and err from the reported values by at most half a unit per
// case (at most 0.00005 USD over 100,000 cases). A sum that would pass the largest int64 stays there.
type RunnerCost struct {
	// cases is the number of results with a record of the runner.
	// +kubebuilder:validation:Minimum=0
	// +required
	Cases int32 `json:"cases"`

	// tokenUsageCases is the number of cases whose record had a valid token_usage.
	// +kubebuilder:validation:Minimum=0
	// +required
	TokenUsageCases int32 `json:"tokenUsageCases"`

	// inputTokens sums token_usage.input.
	// +kubebuilder:validation:Minimum=0
	// +required
	InputTokens int64 `json:"inputTokens"`

	// outputTokens sums token_usage.output.
	// +kubebuilder:validation:Minimum=0
	// +required
	OutputTokens int64 `json:"outputTokens"`

	// cachedTokens sums token_usage.cached (0 for a record without it).
	// +kubebuilder:validation:Minimum=0
	// +required
	CachedTokens int64 `json:"cachedTokens"`

	// totalTokens sums input, output and cached tokens, as the token_usage evaluator counts a case's total.
	// +kubebuilder:validation:Minimum=0
	// +required
	TotalTokens int64 `json:"totalTokens"`

	// costCases is the number of cases whose record had a valid cost_usd.
	// +kubebuilder:validation:Minimum=0
	// +required
	CostCases int32 `json:"costCases"`

	// costUSD sums cost_usd, in US dollars, as a decimal string with at most nine fractional digits
	// ("12.000345678"; "0" when no case reported one).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[0-9]{1,19}(\.[0-9]{1,9})?$`
	// +required
	CostUSD string `json:"costUSD"`

	// durationCases is the number of cases whose record had a valid duration_ms.
	// +kubebuilder:validation:Minimum=0
	// +required
	DurationCases int32 `json:"durationCases"`

	// durationMilliseconds sums duration_ms (concurrent cases each count in full).
	// +kubebuilder:validation:Minimum=0
	// +required
	DurationMilliseconds int64 `json:"durationMilliseconds"`
}

// ScheduleCost sums what the finished runs an EvalSchedule keeps (its history) spent.
type ScheduleCost struct {
	// runs is the number of finished runs summed.
	// +kubebuilder:validation:Minimum=0
	// +required
	Runs int32 `json:"runs"`

	// runner sums the runs' status.cost.runner. Unset when no run had one.
	// +optional
	Runner *RunnerCost `json:"runner,omitempty"`

	// judges sums the runs' status.cost.judges. Unset when no run had one.
	// +optional
	Judges *JudgeUsage `json:"judges,omitempty"`
}
