//go:build unix

package smallfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// held: a name that is a link to what Read refuses is refused as that
// is, at once: a link to a FIFO with no writer (not waited on), to a
// directory, to /dev/zero; a dangling link is fs.ErrNotExist; the bound
// is exact (max bytes read, max+1 refused). Promised (package doc): "a
// FIFO is refused, not waited on ..., a device or directory refused, and
// a file past its bound ... refused after that many bytes"; (Read)
// "errors.Is(err, fs.ErrNotExist) for a missing file".
func TestAttack63ReadThroughLinks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	links := map[string]string{"to-fifo": fifo, "to-dir": sub, "to-zero": "/dev/zero", "to-link-to-fifo": filepath.Join(dir, "to-fifo")}
	for name, target := range links {
		os.Symlink(target, filepath.Join(dir, name))
	}
	for name := range links {
		done := make(chan error, 1)
		go func() { _, _, err := Read(filepath.Join(dir, name), 1<<10); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("Read(%s): no error", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Read(%s): waited", name)
		}
	}
	os.Symlink(filepath.Join(dir, "none"), filepath.Join(dir, "dangling"))
	if _, _, err := Read(filepath.Join(dir, "dangling"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dangling link: %v, want fs.ErrNotExist", err)
	}
	f := filepath.Join(dir, "ten")
	os.WriteFile(f, []byte("0123456789"), 0o600)
	if b, _, err := Read(f, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ten bytes, bound 10: %q %v", b, err)
	}
	if b, _, err := Read(f, 9); err == nil || b != nil || !strings.Contains(err.Error(), "larger than 9") {
		t.Errorf("ten bytes, bound 9: %q %v", b, err)
	}
}
