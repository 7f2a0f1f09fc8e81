//go:build unix

package limits

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/xblgo/fgrl/datafile"
)

// held: MaxSize is exact in JSON and YAML: limits data of exactly MaxSize
// bytes is read, one byte more refused with a *datafile.Error; Load names
// the file for one too large, /dev/zero, a link to it, a directory and a
// FIFO a writer fills without end (refused once past the bound, not read
// forever). Promised (Read): "Read reads limits data of at most MaxSize
// bytes from r ... Every error is a *datafile.Error"; (Load) "its errors
// name the file"; (MaxSize) "so a hostile or corrupt file cannot exhaust
// memory".
func TestAttack63LimitsSizeBoundExact(t *testing.T) {
	js := `{"revision": "atk", "source": "atk", "rules": [{"service": "s", "hosts": ["a.example.com"], "burst": 1, "sustain": 2}]}`
	ym := "revision: atk\nsource: atk\nrules:\n  - service: s\n    hosts: [a.example.com]\n    burst: 1\n    sustain: 2\n"
	pad := func(doc string, n int, c string) []byte {
		return []byte(doc + strings.Repeat(c, n-len(doc)))
	}
	dir := t.TempDir()
	for name, d := range map[string]struct{ doc, pad string }{"json": {js, " "}, "yaml": {ym, "\n"}} {
		if l, err := Read(bytes.NewReader(pad(d.doc, MaxSize, d.pad))); err != nil || len(l.Rules) != 1 {
			t.Errorf("%s of exactly MaxSize: %v", name, err)
		}
		over := pad(d.doc, MaxSize+1, d.pad)
		_, err := Read(bytes.NewReader(over))
		var e *datafile.Error
		if !errors.As(err, &e) || !strings.Contains(e.Reason, "larger than") {
			t.Errorf("%s one byte over MaxSize: %v", name, err)
		}
		f := filepath.Join(dir, name)
		os.WriteFile(f, over, 0o600)
		if _, err := Load(f); !errors.As(err, &e) || e.File != f {
			t.Errorf("Load(%s): %v", f, err)
		}
	}
	link := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a writer that never stops
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		chunk := bytes.Repeat([]byte(" "), 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}()
	for _, name := range []string{"/dev/zero", link, dir, fifo} {
		done := make(chan error, 1)
		go func() { _, err := Load(name); done <- err }()
		select {
		case err := <-done:
			var e *datafile.Error
			if !errors.As(err, &e) || e.File != name {
				t.Errorf("Load(%s): %v, want a *datafile.Error naming it", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Load(%s): still reading after 20 s", name)
		}
	}
}
