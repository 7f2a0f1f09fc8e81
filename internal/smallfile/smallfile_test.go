package smallfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: a regular file is read whole within its bound; past it, a
// directory and a missing file are errors (the last one fs.ErrNotExist).
func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("0123456789"), 0o640)
	if b, mode, err := Read(small, 10); err != nil || string(b) != "0123456789" || mode.Perm() != 0o640 {
		t.Errorf("Read of 10 bytes, bound 10: %q %v %v", b, mode, err)
	}
	if _, _, err := Read(small, 9); err == nil || !strings.Contains(err.Error(), "larger than 9 bytes") {
		t.Errorf("Read of 10 bytes, bound 9: %v", err)
	}
	if _, _, err := Read(filepath.Join(dir, "none"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, err := Read(dir, 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}
