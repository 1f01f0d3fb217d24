// Package evaluate judges eval cases: the deterministic evaluators (tool_trajectory, field_accuracy, latency, cost,
// token_usage, composite), the code_judge contract (payload, script execution, result parsing), and per-case scores
// and verdicts, in the vocabulary of internal/verdict. llm_judge and rubric evaluators (llmjudge.go) call a model
// endpoint (Judge.LLM) and are reported as skipped without one. The package is pure Go apart from running code_judge
// scripts (ScriptRunner) and the model calls of LLM judges (internal/llm); `collector check` and the in-pod
// collector judge with the same code, and nothing else links it (the manager and the plugin read verdicts only).
//
// # AgentV 4.42 suites
//
// A test of an AgentV 4.42 suite (evalfile.Case.Suite set) is judged by AgentV 4.42's graders, which are a package
// of their own built on this one (internal/evaluate/grade42; its doc says why a Judge is given them as a value,
// Judge.Grader42, rather than finding them registered). A Judge made without them judges such a test an Error that
// says so. What the judges of both formats share stays here, exported for the graders and no further: the Judge's
// settings, the LLM judges' bounds and names (MaxReplyAttempts, MaxJudgedAnswerBytes, NoModelReason,
// JudgeTargetName) and reply reading (JSONFromText, DescribeJSON, Substitute, TemplateVariables), the answer
// delimiters (Judge.Delimiter), the script runner with the code-grader contract it runs (CodeGrader42Runner,
// CodeGraderInput, RunCodeGrader42), a case's bundle files (CaseFiles, ReadBundleFile), the JSON AgentV writes
// (MarshalObject, MarshalNoEscape, Stringify), the field_accuracy comparison (FieldAccuracy) and the result helpers
// (Bounded, FirstNote, JudgeFailure, SumEvaluators).
package evaluate
