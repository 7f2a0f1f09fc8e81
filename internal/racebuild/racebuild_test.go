package racebuild

import (
	"runtime/debug"
	"testing"
)

// TestEnabledIsTheBuilds: Enabled says what the build's own settings say
// (go test -race sets -race=true in the binary's build information).
func TestEnabledIsTheBuilds(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build information")
	}
	built := false
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			built = true
		}
	}
	if Enabled != built {
		t.Errorf("Enabled is %v, but the binary's -race setting is %v", Enabled, built)
	}
}
