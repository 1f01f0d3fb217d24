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

// EvaluatorTypes lists the supported types.
var EvaluatorTypes = []EvaluatorType{
	TypeCodeJudge, TypeLLMJudge, TypeRubric, TypeComposite, TypeToolTrajectory, TypeFieldAccuracy,
	TypeLatency, TypeCost, TypeTokenUsage,
}

// EvaluatorConfig is one validated evaluator entry. Exactly the field matching Type is set (llm_judge and rubric
// share LLMJudge).
type EvaluatorConfig struct {
	Name string
	Type EvaluatorType
	// Weight is the entry's weight in its case's score (default 1; 0 excludes it); nil when not written.
	Weight *float64
	// Key identifies the evaluator within its case: Name for a top-level entry, "<composite key>/<Name>" for a
	// composite member (names cannot contain '/', so keys are unique). Recorded code_judge results are keyed by
	// it; a composite's code_judge aggregator result is keyed by the composite's Key.
	Key string
	// Raw is the entry as written, as JSON with its key order.
	Raw json.RawMessage

	ToolTrajectory *ToolTrajectoryConfig
	FieldAccuracy  *FieldAccuracyConfig
	Latency        *LatencyConfig
	Cost           *CostConfig
	TokenUsage     *TokenUsageConfig
	CodeJudge      *CodeJudgeConfig
	Composite      *CompositeConfig
	LLMJudge       *LLMJudgeConfig
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
)

// ToolTrajectoryConfig configures a tool_trajectory evaluator.
type ToolTrajectoryConfig struct {
	Mode TrajectoryMode
	// Minimums maps a tool name to its least call count (any_order), in the order written.
	Minimums []ToolMinimum
	// Expected are the expected calls (in_order, exact).
	Expected []ExpectedCall
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
}

// AggregatorType is a composite aggregator type.
type AggregatorType string

// Composite aggregator types.
const (
	AggregatorWeightedAverage AggregatorType = "weighted_average"
	AggregatorCodeJudge       AggregatorType = "code_judge"
	AggregatorLLMJudge        AggregatorType = "llm_judge"
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
}
