// Package grade42 judges the tests of AgentV 4.42 suites (evalfile.Case.Suite set) as AgentV 4.42.4 judges a test
// of a CLI target run in batch mode: its graders (registry/builtin-graders.ts), their prompts and reply schemas
// word for word (graders/llm-grader.ts), its code-grader contract (graders/code-grader.ts) and its rules of
// verdicts and scores (orchestrator.ts). Where it deliberately differs is in suite42.go and docs/judging.md.
//
// Its files are one part each: suite42.go the rules of scores and verdicts and Graders; context42.go what a test's
// input, expected output and answer are to the graders; llmgrader42.go, codegrader42.go, composite42.go,
// assertions42.go and trajectory42.go the graders; jsvalue.go JSON values as AgentV's JavaScript holds them.
//
// # How a Judge reaches the graders
//
// internal/evaluate is the engine both formats share: the Judge and its settings, the agentv-eval-v2 evaluators,
// the LLM judges' bounds, the script runner, the answer delimiters, a case's bundle files and the JSON AgentV
// writes. This package builds on it, and evaluate does not import it: a Judge is given the graders as a value,
//
//	&evaluate.Judge{Threshold: t, Grader42: grade42.Graders{}}
//
// (evaluate.Grader42), by each place that makes a Judge to judge runs: `collector check` (internal/cli/check),
// the collector (internal/pod/collector) and the judge runner (internal/pod/judgerunner), each tested with a 4.42
// suite. A Judge made without them judges a 4.42 test an Error that says so, never as agentv-eval-v2; and
// test/architecture fails when a binary links evaluate but not this package.
//
// A value, not a registration (internal/evalfile/suite42 registers its reader with evalfile in its init): a Judge
// is a value its maker fills field by field already (its threshold, model, code judge runner, bundle), so the
// graders are one more field, seen where the Judge is made; no init order or package-level registry decides what
// a Judge can judge, and a test makes a Judge with or without them. Parsing has no such value to carry a reader:
// evalfile.Parse is a function that every binary and the tests of a dozen packages call.
//
// # Size
//
// This package is about 3,600 lines, above the 3,000 a package should stay under (issue 38). It stays one package
// because every grader builds the same two types: a grader's result in AgentV's terms (grade42, with its
// assertions, members and raw request) and AgentV's JSON values (orderedObject), written as about 130 unkeyed
// literals key by key as AgentV's payloads and prompts have them. A grader in a package of its own would need both
// exported, and go vet allows unkeyed literals of a struct only in the package that defines it: each package
// would write its payloads with keyed members or hold an ordered object of its own.
package grade42
