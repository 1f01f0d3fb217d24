package evalfile

import "encoding/json"

// EvaluatorType is the type of an evaluator entry.
type EvaluatorType string

// Evaluator types. Any other type is a validation error.
const (
	TypeCodeJudge      EvaluatorType = "code_judge"
	TypeLLMJudge       EvaluatorType = "llm_judge"
	TypeRubric         EvaluatorType = "rubric"
	TypeComposite      EvaluatorType = "composite"
	TypeToolTrajectory EvaluatorType = "tool_trajectory"
	TypeFieldAccuracy  EvaluatorType = "field_accuracy"
	TypeLatency        EvaluatorType = "latency"
	TypeCost           EvaluatorType = "cost"
	TypeTokenUsage     EvaluatorType = "token_usage"
)

// EvaluatorTypes lists the types an agentv-eval-v2 file may name.
var EvaluatorTypes = []EvaluatorType{
	TypeCodeJudge, TypeLLMJudge, TypeRubric, TypeComposite, TypeToolTrajectory, TypeFieldAccuracy,
	TypeLatency, TypeCost, TypeTokenUsage,
}

// Evaluator types only AgentV 4.42 suites have (their graders of the same names, EvaluatorConfig.Grader). A 4.42
// grader whose v2 counterpart exists takes that type (code-grader is TypeCodeJudge, llm-grader and rubrics are
// TypeLLMJudge, tool-trajectory is TypeToolTrajectory, ...), so that what the pod plans from types (judge
// containers, model requests) holds for both formats; Grader says which 4.42 grader it is.
const (
	TypeExecutionMetrics EvaluatorType = "execution_metrics"
	TypeSkillTrigger     EvaluatorType = "skill_trigger"
	TypeContains         EvaluatorType = "contains"
	TypeContainsAny      EvaluatorType = "contains_any"
	TypeContainsAll      EvaluatorType = "contains_all"
	TypeIContains        EvaluatorType = "icontains"
	TypeIContainsAny     EvaluatorType = "icontains_any"
	TypeIContainsAll     EvaluatorType = "icontains_all"
	TypeStartsWith       EvaluatorType = "starts_with"
	TypeEndsWith         EvaluatorType = "ends_with"
	TypeRegex            EvaluatorType = "regex"
	TypeIsJSON           EvaluatorType = "is_json"
	TypeEquals           EvaluatorType = "equals"
)

// EvaluatorConfig is one validated evaluator entry. Exactly the field matching Type is set (llm_judge and rubric
// share LLMJudge).
type EvaluatorConfig struct {
	Name string
	Type EvaluatorType
	// Grader is the AgentV 4.42 grader type as it registers it (builtin-graders.ts: "llm-grader", "code-grader",
	// "composite", "contains", ...; the deprecated "rubric" and the string assertions' "rubrics" group keep their
	// own names), for an evaluator of a 4.42 suite; "" for agentv-eval-v2's.
	Grader string
	// Weight is the entry's weight in its case's score (default 1; 0 excludes it); nil when not written.
	Weight *float64
	// Key identifies the evaluator within its case: Name for a top-level entry, "<composite key>/<Name>" for a
	// composite member (names cannot contain '/', so keys are unique). Recorded code_judge results are keyed by
	// it; a composite's code_judge aggregator result is keyed by the composite's Key.
	Key string
	// Raw is the entry as written, as JSON with its key order.
	Raw json.RawMessage

	// The 4.42 modifiers (never set from agentv-eval-v2). Required: a score below MinScore (or the case's
	// threshold) fails the whole case (required: true, or the deprecated required: <number>, which also sets
	// MinScore). MinScore is min_score (0 to 1), the score the evaluator passes at; nil when not set. Negate
	// inverts the verdict (negate: true).
	Required bool
	MinScore *float64
	Negate   bool

	ToolTrajectory *ToolTrajectoryConfig
	FieldAccuracy  *FieldAccuracyConfig
	Latency        *LatencyConfig
	Cost           *CostConfig
	TokenUsage     *TokenUsageConfig
	CodeJudge      *CodeJudgeConfig
	Composite      *CompositeConfig
	LLMJudge       *LLMJudgeConfig
	// 4.42 only.
	ExecutionMetrics *ExecutionMetricsConfig
	SkillTrigger     *SkillTriggerConfig
	Assertion        *AssertionConfig
}

// ExecutionMetricsConfig configures a 4.42 execution-metrics grader: each limit set is an upper bound on the
// response's execution metrics (TargetExplorationRatio a target, within ExplorationTolerance).
type ExecutionMetricsConfig struct {
	MaxToolCalls, MaxLLMCalls, MaxTokens, MaxCostUSD, MaxDurationMs *float64
	TargetExplorationRatio, ExplorationTolerance                    *float64
}

// SkillTriggerConfig configures a 4.42 skill-trigger grader: whether the response triggered Skill (ShouldTrigger,
// nil when not written: AgentV's default applies).
type SkillTriggerConfig struct {
	Skill         string
	ShouldTrigger *bool
}

// AssertionConfig configures a 4.42 deterministic string assertion (contains, contains-any, contains-all,
// icontains..., starts-with, ends-with, regex, equals; is-json has none of it). Values holds value: one string, or
// the list of the -any and -all forms. Flags are a regex's flags as written.
type AssertionConfig struct {
	Values []string
	Flags  string
}

// EffectiveWeight is Weight, or 1 when unset.
func (e *EvaluatorConfig) EffectiveWeight() float64 {
	if e.Weight == nil {
		return 1
	}
	return *e.Weight
}

// TrajectoryMode is a tool_trajectory mode.
type TrajectoryMode string

// tool_trajectory modes.
const (
	// ModeAnyOrder: every tool in minimums is called at least that many times, in any order.
	ModeAnyOrder TrajectoryMode = "any_order"
	// ModeInOrder: the expected calls appear in this order; other calls may come between them.
	ModeInOrder TrajectoryMode = "in_order"
	// ModeExact: the calls are exactly the expected ones, in order, and no others.
	ModeExact TrajectoryMode = "exact"
	// ModeSubset and ModeSuperset (4.42 only): the calls are a subset, or a superset, of the expected ones.
	ModeSubset   TrajectoryMode = "subset"
	ModeSuperset TrajectoryMode = "superset"
)

// ToolTrajectoryConfig configures a tool_trajectory evaluator.
type ToolTrajectoryConfig struct {
	Mode TrajectoryMode
	// Minimums maps a tool name to its least call count (any_order), in the order written.
	Minimums []ToolMinimum
	// Expected are the expected calls (in_order, exact, subset, superset).
	Expected []ExpectedCall
	// ArgsMatch is the 4.42 args_match of the whole grader; nil when not written.
	ArgsMatch *ArgsMatch
}

// ArgsMatch is a 4.42 args_match: how a call's arguments are compared with the expected ones. Mode is exact,
// superset, subset or ignore; or Fields lists the argument paths compared (Mode "").
type ArgsMatch struct {
	Mode   string
	Fields []string
}

// ToolMinimum is one entry of minimums.
type ToolMinimum struct {
	Tool  string
	Count int
}

// ExpectedCall is one element of expected.
type ExpectedCall struct {
	Tool string
	// AnyArgs is true for args: any; otherwise Args (when non-nil) must be a JSON object whose keys the call's
	// input must match with deep equality (other keys of the input are ignored).
	AnyArgs bool
	Args    json.RawMessage
	// MaxDurationMs (4.42 max_duration_ms) bounds the call's duration; ArgsMatch is its own args_match. Both nil
	// when not written.
	MaxDurationMs *float64
	ArgsMatch     *ArgsMatch
}

// FieldMatch is how a field_accuracy field is compared.
type FieldMatch string

// field_accuracy match types.
const (
	MatchExact            FieldMatch = "exact"
	MatchNumericTolerance FieldMatch = "numeric_tolerance"
	MatchDate             FieldMatch = "date"
)

// FieldAggregation combines field scores.
type FieldAggregation string

// field_accuracy aggregations.
const (
	AggregationWeightedAverage FieldAggregation = "weighted_average"
	AggregationAllOrNothing    FieldAggregation = "all_or_nothing"
)

// FieldAccuracyConfig configures a field_accuracy evaluator.
type FieldAccuracyConfig struct {
	Fields []FieldSpec
	// Aggregation defaults to weighted_average.
	Aggregation FieldAggregation
}

// FieldSpec is one field of a field_accuracy evaluator.
type FieldSpec struct {
	// Path is a dot path with [i] indexes, for example invoice.items[0].amount.
	Path  string
	Match FieldMatch
	// Required defaults to true: a missing candidate value scores 0. A missing optional value is left out.
	Required bool
	// Weight defaults to 1.
	Weight float64
	// Tolerance (numeric_tolerance) is absolute, or relative to the expected value when Relative is set.
	Tolerance float64
	Relative  bool
	// Formats (date) are the date layouts to accept, in the reference tool's notation (MM/DD/YYYY, DD/MM/YYYY,
	// ...); they only decide how ambiguous numeric dates are read.
	Formats []string
}

// LatencyConfig configures a latency evaluator: duration_ms must not exceed ThresholdMs.
type LatencyConfig struct {
	ThresholdMs float64
}

// CostConfig configures a cost evaluator: cost_usd must not exceed BudgetUSD.
type CostConfig struct {
	BudgetUSD float64
}

// TokenUsageConfig configures a token_usage evaluator; at least one limit is set.
type TokenUsageConfig struct {
	MaxTotal  *float64
	MaxInput  *float64
	MaxOutput *float64
}

// CodeJudgeConfig configures a code_judge evaluator (or a composite's code_judge aggregator).
type CodeJudgeConfig struct {
	// Script is the shell command to run (an argv array is joined with shell quoting).
	Script string
	// Cwd is the working directory as written, relative to the judge runner's base directory when not absolute.
	Cwd string
	// Config holds the entry's other keys as a JSON object in their written order, passed to the script as
	// config; nil when there are none.
	Config json.RawMessage
	// Argv is a 4.42 command written as a list of arguments, as written (Script joins them with shell quoting);
	// nil for a command string, which AgentV 4.42 runs with sh -lc.
	Argv []string
}

// AggregatorType is a composite aggregator type.
type AggregatorType string

// Composite aggregator types.
const (
	AggregatorWeightedAverage AggregatorType = "weighted_average"
	AggregatorCodeJudge       AggregatorType = "code_judge"
	AggregatorLLMJudge        AggregatorType = "llm_judge"
	// AggregatorThreshold (4.42 only): the composite passes when the share of its members that pass is at least
	// Threshold.
	AggregatorThreshold AggregatorType = "threshold"
)

// CompositeConfig configures a composite evaluator.
type CompositeConfig struct {
	// Members are the member evaluators (at least one), with unique names.
	Members []*EvaluatorConfig
	// Aggregator defaults to weighted_average when the entry has none.
	Aggregator AggregatorType
	// Weights are weighted_average weights by member name; a member without one uses its own weight or 1.
	Weights map[string]float64
	// Script is the code_judge aggregator's script (aggregator.path or aggregator.script).
	Script *CodeJudgeConfig
	// Prompt is the llm_judge aggregator's prompt, if any.
	Prompt string
	// PromptFile is a 4.42 llm-grader aggregator's prompt file (its prompt written file://PATH: PATH, resolved like
	// an input file); "" when the prompt is inline text.
	PromptFile string
	// Threshold is the threshold aggregator's threshold (0 to 1).
	Threshold float64
}

// LLMJudgeConfig configures an llm_judge or rubric evaluator. They need a model endpoint and are judged as
// skipped until one exists; the config is kept for that.
type LLMJudgeConfig struct {
	// Prompt is the prompt as written (a string, or an object for script prompts).
	Prompt json.RawMessage
	Model  string
	// Rubrics are the entry's rubrics (required and non-empty for type rubric).
	Rubrics []Rubric
	// Config holds the other keys, merged with an explicit config object.
	Config json.RawMessage

	// 4.42 only. PromptFile is the prompt file of a prompt written file://PATH (PATH; AgentV 4.42 reads any other
	// string as the prompt's text, never as a file). PromptCommand is a prompt object's command (its config is
	// Config). Temperature and MaxSteps are temperature and max_steps, nil and 0 when not written.
	PromptFile    string
	PromptCommand []string
	Temperature   *float64
	MaxSteps      int
}
