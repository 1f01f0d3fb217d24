package evalfile_test

// This package's tests read AgentV 4.42 suites too (Scan's and Parse's oracles, FuzzParse's seeds, the format
// dispatch): they link the 4.42 reader, as every binary that reads eval files does (test/architecture). The internal
// tests share this test binary, so they see the reader registered.
import _ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
