// Package smallfile reads the small files a user names (a certificate, a
// key, a stored sign-in) safely whatever the name turns out to be: a FIFO
// is refused, not waited on (the file is opened without waiting for a
// writer), a device or directory refused, and a file past its bound (a
// wrong path to a large file) refused after that many bytes.
package smallfile

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
)

// Read reads the regular file name, at most max bytes, and returns its
// contents and the mode of the file opened (not of a name that may change
// between a check and the read). Errors keep their causes: errors.Is(err,
// fs.ErrNotExist) for a missing file.
func Read(name string, max int64) ([]byte, fs.FileMode, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fi.Mode(), fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	max = min(max, math.MaxInt64-1) // max+1 below must not overflow
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("larger than %d bytes", max)
	}
	if err != nil {
		return nil, fi.Mode(), err
	}
	return b, fi.Mode(), nil
}
