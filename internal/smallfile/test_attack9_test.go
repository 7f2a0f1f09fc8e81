//go:build unix

package smallfile

// An outside attack (attack9c116) on bfe66c5's internal/smallfile.Read.

import (
	"bytes"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAttack9cReadNoBoundReadsNothing: smallfile.go Read "reads the regular
// file name, at most max bytes, and returns its contents". With the
// largest bound (math.MaxInt64: "no bound"), io.LimitReader(f, max+1)
// gets a negative limit (max+1 overflows), which reads nothing: Read
// returns an empty slice and no error for a file of ten bytes, as if the
// file were empty. (No caller passes it today; every bound in the module
// is 64 KiB or 1 MiB.)
func TestAttack9cReadNoBoundReadsNothing(t *testing.T) {
	name := filepath.Join(t.TempDir(), "ten")
	os.WriteFile(name, []byte("0123456789"), 0o600)
	b, _, err := Read(name, math.MaxInt64)
	if err == nil && string(b) != "0123456789" {
		t.Errorf("Read(10-byte file, math.MaxInt64) = %q, nil error: want its contents or an error", b)
	}
}

// held: the package doc "a FIFO is refused, not waited on (the file is
// opened without waiting for a writer), a device or directory refused";
// Read "returns its contents and the mode of the file opened". A FIFO with
// a writer attached and data in it, /dev/zero, /dev/null, a Unix socket:
// each refused (or an error) at once, none read; a link to a regular file
// is followed and the mode is the file's, not the link's.
func TestAttack9cHeldReadOddFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	rd, _ := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	defer rd.Close()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("data"))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err == nil {
		defer l.Close()
	}
	for _, name := range []string{fifo, "/dev/zero", "/dev/null", sock} {
		done := make(chan error, 1)
		go func() { _, _, err := Read(name, 1<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("Read(%s): no error", name)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Read(%s): waited", name)
		}
	}
	real := filepath.Join(dir, "real")
	os.WriteFile(real, []byte("x"), 0o640)
	os.Chmod(real, 0o640)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	if b, mode, err := Read(link, 10); err != nil || !bytes.Equal(b, []byte("x")) || mode.Perm() != 0o640 {
		t.Errorf("Read through a link: %q %v %v", b, mode, err)
	}
	if _, _, err := Read(real, 0); err == nil || !strings.Contains(err.Error(), "larger than 0 bytes") {
		t.Errorf("Read of 1 byte, bound 0: %v", err)
	}
}
