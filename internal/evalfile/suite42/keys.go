package suite42

// The keys the 4.42 reader looks up in more than one place (agentv-eval-v2's reader spells its own: evalfile's
// keys.go). A key read in one place only is written where it is read.
const (
	// keyName names an evaluator or a grader.
	keyName = "name"
	// keyType is an evaluator's, a grader's, an aggregator's or a content segment's type.
	keyType = "type"
	// keyInput is a 4.42 test's or suite's input.
	keyInput = "input"
	// keyTarget is the runner target a file or a suite names, or the model a grader would grade with.
	keyTarget = "target"
	// keyExecution is a file's, a suite's or a test's execution settings.
	keyExecution = "execution"
	// keyEvaluators is agentv-eval-v2's list of evaluators (a composite's members too), which AgentV 4.42 reads as
	// a deprecated alias of assertions.
	keyEvaluators = "evaluators"
	// keyAssertions is a 4.42 suite's, test's or composite's list of graders; keyAssert is its deprecated alias.
	keyAssertions = "assertions"
	keyAssert     = "assert"
	// keyRubrics is a case's or an LLM evaluator's list of rubric items.
	keyRubrics = "rubrics"
	// keyWeight is an evaluator's, a grader's or a rubric item's weight.
	keyWeight = "weight"
)

// AgentV 4.42's grader types that the reader tells apart from the others (graderKinds lists them all).
const (
	graderCode = "code-grader"
	graderLLM  = "llm-grader"
	// graderRubrics is the type of a list of criteria (read as an llm-grader), and the name AgentV gives such a
	// grader written without one; graderRubric is its deprecated form, with rubric items.
	graderRubrics = "rubrics"
	graderRubric  = "rubric"
)
