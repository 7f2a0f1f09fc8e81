package limits

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/xblgo/fgrl/datafile"
)

// FuzzRead: limits data is read into sane rules, or refused with a
// *datafile.Error of at most 400 bytes.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"data/2020.json", "data/2022.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"rules": [{"service": "a", "hosts": ["a*"], "paths": ["/x/*"], "sustain": 1}]}`))
	f.Add([]byte(`{"rules": [{"service": "a",,}]}`))
	f.Add([]byte("rules:\n  - {service: a, hosts: [a.com], burst: 1, sustain: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Read(bytes.NewReader(data))
		if err != nil {
			var de *datafile.Error
			if !errors.As(err, &de) || len(err.Error()) > 400 {
				t.Fatalf("Read error %T %q, want a *datafile.Error of at most 400 bytes", err, err)
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
