package evalfile

// The keys agentv-eval-v2's reader and the runner view look up in more than one place (the 4.42 reader spells its
// own: suite42/keys.go). A key read in one place only is written where it is read.
const (
	// keyName names an evaluator.
	keyName = "name"
	// keyType is an evaluator's, an aggregator's or a content segment's type.
	keyType = "type"
	// keyInput is a tool call's input (and a 4.42 test's input, in its view); keyOutput is a tool call's output.
	keyInput  = "input"
	keyOutput = "output"
	// keyTarget is the runner target a file names.
	keyTarget = "target"
	// keyExecution is a file's or a case's execution settings.
	keyExecution = "execution"
	// keyEvaluators is a file's, a case's or a composite's list of evaluators.
	keyEvaluators = "evaluators"
	// keyRubrics is a case's or an LLM evaluator's list of rubric items.
	keyRubrics = "rubrics"
	// keyWeight is an evaluator's or a rubric item's weight.
	keyWeight = "weight"
)
