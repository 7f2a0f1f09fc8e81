package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCtrlCEndsStuckOpen: the built xblcall, stuck opening a FIFO no
// one writes (call -d @fifo), ends on Ctrl-C: a second SIGINT ends it at
// once (the first restores the signals' default), and it never outlives
// the grace. Before: every SIGINT was caught, and the process blocked in
// open(2) until SIGKILL.
func TestCtrlCEndsStuckOpen(t *testing.T) {
	t.Parallel()
	bin := installXblcall(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	defer func() { // a stuck open, if any is left, ends
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	cmd := exec.Command(filepath.Join(bin, "xblcall"), "call", "--mock", "-d", "@"+fifo, loadURL)
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("xblcall call -d @fifo: still running 3 s after two SIGINTs: %s", errs.String())
	}
}
