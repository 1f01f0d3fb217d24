package collector

// This package's tests judge AgentV 4.42 suites: they link the 4.42 reader, as every binary that reads eval files
// does (test/architecture checks the binaries).
import _ "github.com/evalrun-operator/evalrun-operator/internal/evalfile/suite42"
