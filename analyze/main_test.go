package analyze

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the benchmarks' generated trace.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchFile != "" {
		os.RemoveAll(filepath.Dir(benchFile))
	}
	os.Exit(code)
}
