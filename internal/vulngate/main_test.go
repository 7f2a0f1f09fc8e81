package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestGate(t *testing.T) {
	std := `{"finding":{"osv":"GO-1","fixed_version":"go1.26.9","trace":[{"module":"stdlib","version":"go1.26.8","package":"net/http","function":"Get"}]}}`
	dep := `{"finding":{"osv":"GO-2","fixed_version":"v1.1.0","trace":[{"module":"example.com/m","version":"v1.0.0","package":"example.com/m","function":"F"}]}}`
	uncalled := `{"finding":{"osv":"GO-3","trace":[{"module":"example.com/n","version":"v1.0.0","package":"example.com/n"}]}}`
	tests := []struct {
		in   string
		fail bool
	}{
		{`{"config":{"scan_level":"symbol","scan_mode":"source"}}` + std + uncalled, false},
		{`{"config":{"scan_level":"symbol","scan_mode":"source"}}` + std + dep, true},
		{std + dep, true}, // no config message
		{`{"finding":`, true},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := gate(strings.NewReader(tt.in), &out)
		if (err != nil) != tt.fail {
			t.Errorf("gate(%.60q) = %v, want failure %v; output:\n%s", tt.in, err, tt.fail, out.String())
		}
	}
}
