package collector

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopEnv()
	removeBenchWorkload()
	os.Exit(code)
}
