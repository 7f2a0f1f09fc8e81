package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPEMFilesBounded: --redis-ca (mock) and --ca-cert (watch) name
// a FIFO fed 64 MiB: each reads at most about 1 MiB of it and exits 2.
// Before: read whole (os.ReadFile; /dev/zero: 1.8 GB resident after 3 s,
// without end).
func TestPEMFilesBounded(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"mock", "--addr", "127.0.0.1:0", "--redis", "rediss://127.0.0.1:1/0", "--redis-ca"},
		{"watch", "presence", "2533274791234567", "--via", "http://127.0.0.1:1", "--ca-cert"},
	} {
		fifo := filepath.Join(t.TempDir(), "pem")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip(err)
		}
		const feed = 64 << 20
		wrote := make(chan int, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				wrote <- 0
				return
			}
			defer f.Close()
			chunk, n := make([]byte, 64<<10), 0
			for n < feed {
				m, err := f.Write(chunk)
				n += m
				if err != nil {
					break
				}
			}
			wrote <- n
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var out, errs bytes.Buffer
		code := run(ctx, append(args, fifo), &out, &errs, withTestEnv(t))
		cancel()
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // a writer still waiting for a reader ends
		}
		n := <-wrote
		if code != 2 || n > 4<<20 {
			t.Errorf("%s %s: exit %d, read %d bytes of a 64 MiB file: %s", args[0], args[len(args)-1], code, n, errs.String())
		}
	}
}
