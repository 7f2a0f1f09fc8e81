package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/xblgo/fgrl"

// forbidden are the imports docs/ARCHITECTURE.md says must never exist
// (non-test code; "*" is any package of the module).
var forbidden = map[string][]string{
	"throttle":  {"*"},
	"limits":    {"transport", "client", "mock", "ratelimit"},
	"ratelimit": {"transport", "client", "mock", "limits"},
	"client":    {"mock"},
	"mock":      {"client", "transport"},
	"transport": {"client", "mock"},
	"hresult":   {"*"},
	"analyze":   {"transport", "client", "mock"},
}

func TestArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			to, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			for _, f := range forbidden[from] {
				if f == "*" || to == f {
					t.Errorf("%s imports %s: docs/ARCHITECTURE.md forbids it", from, to)
				}
			}
		}
	}
}
