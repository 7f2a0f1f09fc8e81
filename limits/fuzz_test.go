package limits

import (
	"os"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"data/2020.json", "data/2022.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"rules": [{"service": "a", "hosts": ["a*"], "paths": ["/x/*"], "sustain": 1}]}`))
	f.Add([]byte(`{"rules": [{"service": "a",,}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse error %T is not a *Error: %v", err, err)
			}
			return
		}
		for i := range l.Rules {
			r := &l.Rules[i]
			if r.Burst < 0 || r.Sustain < 0 || r.Burst+r.Sustain == 0 {
				t.Fatalf("accepted rule with bad limits: %+v", r)
			}
			for _, h := range r.Hosts {
				if got, ok := l.Match("GET", h, "/"); ok && got.Scope() == "" {
					t.Fatalf("Match(%q) returned a rule with no scope", h)
				}
			}
		}
	})
}
