package controller_test

// The manager these tests run reads AgentV 4.42 suites as cmd/manager does: it links the 4.42 reader, which
// registers itself with evalfile (TestAgentV442SuiteNotRunYet).
import _ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
