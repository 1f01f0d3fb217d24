// Package suite42 reads AgentV 4.42 suites into evalfile's model. AgentV's stable release (npm agentv 4.42.4) no
// longer reads agentv-eval-v2: it reads suites whose cases are `tests` (input, expected_output, criteria,
// assertions). Its loader (packages/core/src/evaluation at tag v4.42.4: yaml-parser.ts, loaders/*,
// registry/builtin-graders.ts) is the reference for what this package reads of such a suite, mapped onto the same
// model as agentv-eval-v2 (evalfile.File, Case, EvaluatorConfig), so that shards, views, Scan and Subset work on both
// formats:
//
//   - evalfile tells the format from the document: a top-level tests (or its deprecated alias eval_cases) makes a
//     4.42 suite, unless $schema says agentv-eval-v2; anything else is agentv-eval-v2, which evalfile reads itself;
//   - tests inline, as a path (a YAML or JSONL file, or a directory of case.yaml files) or as file:// entries,
//     read through the files given with evalfile.WithFiles (tests.go, files.go); suite-level input, input_files
//     and assertions (execution.skip_defaults opts a test out); vars templating (vars.go); criteria;
//     expected_output in its forms; assertions with include templates (graders.go); per-test execution
//     (threshold, fail_on_error); the suite's execution.trials, as the EvalRun's trials when its spec sets none
//     (trials.go: count, pass_at_k as the pass rate 1/count); metadata; and the deprecated aliases 4.42 still reads;
//   - where AgentV 4.42 reads something the operator cannot honour, the file is refused with a problem naming the
//     key and its line, never silently read otherwise: workspaces and their hooks, conversation mode (turns),
//     depends_on, targets other than the one runner, a code-grader's target, custom grader types, trials decided
//     by a score (strategy mean, confidence_interval) or bounded by a cost limit, a test's own trials, budgets,
//     preprocessors, prompt scripts, ${{ ENV }} interpolation; and where AgentV silently skips a test or a grader
//     (an incomplete test, an invalid grader), or warns about a value and ignores it (an invalid trials count),
//     the file is refused too, saying what AgentV would have done;
//   - what AgentV reads with a deprecation warning, or ignores, becomes a warning (File.Warnings).
//
// A 4.42 suite is always read whole (its cases kept built): evalfile.Scan reads it up to its in-memory limit, like
// any file that cannot be read one case at a time; its other files count toward the same bound
// (maxSuiteFilesBytes).
//
// The package registers its reader with evalfile in its init (evalfile.RegisterFormat, as image/png registers its
// decoder): a binary reads 4.42 suites only when it links this package, so every binary that links evalfile imports
// it for that side effect in its main, which test/architecture checks. evalfile.Parse, Scan, Subset and WriteView
// tell a suite from the document and call this reader; without it they refuse the suite with an
// *evalfile.UnlinkedFormatError. What both formats share stays in evalfile and is read alike: the EvalRun's
// judging.evaluators (in agentv-eval-v2's shape, evalfile.Parser.DefaultEvaluators), case ids, tool calls,
// field_accuracy fields and token limits (the Parser this reader embeds); the runner view of a suite is written
// from the model by evalfile (view_suite42.go).
//
// About 3,400 lines: one format's reader, over a third of them its graders (graders.go), whose state
// (suiteParser: the suite's files, templates and generated names) every part shares. The package is pure Go; it
// reads files only through the fs.FS it is given.
package suite42
