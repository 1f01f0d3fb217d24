// Package evalfile reads eval files in the reference tool's two formats into one model: agentv-eval-v2 (AgentV
// v2.0.1: evalcases, input_messages, execution.evaluators) and the suites AgentV 4.42 reads (tests, input,
// expected_output, criteria, assertions). The format is told from the document (format.go). It gives the
// file-level defaults, the eval cases with their structured messages, and the evaluator entries of every case; it
// validates a file as a whole and reports every problem with its location, so that an invalid file stops a run
// before any pod starts. Scan gives a file's facts from a stream, one item at a time; Subset cuts a file to some
// of its cases (a shard's); WriteView writes the runner view (view.go).
//
// Message content is kept exactly as written (a string, an object with its key order, or an array of segments)
// because runners and judges read it raw. The package is pure Go.
//
// # Packages
//
// The package is split by format over the one model it holds:
//
//   - evalfile: the model (File, Case, EvaluatorConfig, Problem, Facts), the runner view of both formats, the
//     format registry (FormatReader), and the agentv-eval-v2 reader (parse.go, evaluators.go, segment.go, items.go,
//     scan.go, subset.go);
//   - evalfile/yamltree: the YAML tree with key order and lines, the fast item reader and the member readers every
//     format's reader shares; a leaf that knows neither format;
//   - evalfile/suite42: the AgentV 4.42 suite reader, which registers itself (RegisterFormat) in every binary that
//     links it, as image/png does with image: each binary that reads eval files imports it in its main, and
//     test/architecture fails when one does not. A binary that does not link it refuses a 4.42 suite with an
//     *UnlinkedFormatError that says so, never as a malformed agentv-eval-v2 file.
//
// # Why agentv-eval-v2's reader stays here
//
// This package is about 4,000 lines, above the 3,000 a package should stay under (issue 38): about 1,600 of model,
// format registry and runner view (this doc included), and the 2,400 of the agentv-eval-v2 reader, which stays with
// the model rather than in a package of its own because the model's large files are that reader's. A File read from a large v2
// file is its text and each case's place in it: CaseAt, Case, CaseView and WriteView build a case again from its
// text with that reader (items.go, File.rebuild) on every call, which is what keeps a 100,000-case file at about
// 40 bytes a case. ParseShared, Scan and its Facts, and Subset's byte-for-byte cut are defined on the v2 format's
// cut into items (segment.go). And the EvalRun's judging.evaluators are written in agentv-eval-v2's evaluator
// shape whatever the file's format, so the 4.42 reader embeds the v2 Parser to read them (and case ids, tool calls,
// field_accuracy fields, token limits) alike. Moving the reader out would put an interface between File and every
// case it builds, and make each binary and the tests of a dozen packages that parse v2 files link a registered
// reader for the format every run uses; keeping it here costs one package of about 4,000 lines whose parts each
// have their own file.
package evalfile
