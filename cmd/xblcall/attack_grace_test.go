package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestInterruptEndsStuckOpen: Ctrl-C ends a command stuck opening a
// FIFO no one writes (-d @fifo), within the grace. Before: SIGINT was
// caught and the process blocked in open(2) forever (call -d @fifo,
// mock --world fifo, analyze fifo, simulate --limits fifo: each needed
// SIGKILL).
func TestInterruptEndsStuckOpen(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	defer func(g time.Duration) { interruptGrace = g }(interruptGrace)
	interruptGrace = time.Second
	ctx, interrupt := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, interrupt)
	stopped := make(chan struct{})
	stop := func() {
		select {
		case <-stopped:
		default:
			close(stopped)
		}
	}
	var out, errs syncBuffer
	start := time.Now()
	done := make(chan int, 1)
	go func() {
		done <- runBounded(ctx, stop, []string{"call", "--mock", "-d", "@" + fifo, loadURL}, &out, &errs, withTestEnv(t))
	}()
	select {
	case code := <-done:
		if code != 130 || time.Since(start) > 5*time.Second {
			t.Errorf("exit %d after %v: %s", code, time.Since(start), errs.String())
		}
	case <-time.After(8 * time.Second):
		t.Errorf("call -d @fifo: still running 8 s after an interrupt at 0.2 s")
	}
	// Let the stuck open end: a writer opens and closes the FIFO.
	if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
	time.Sleep(100 * time.Millisecond)
}
