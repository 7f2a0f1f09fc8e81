// Package pagetest runs the page tests' headless Chromium (Debian's
// chromium; CI installs it) through chromedp, and collects the pages'
// script errors.
package pagetest

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Start starts a headless Chromium for the test and returns its context
// (ending after timeout) and a function that stops the browser and returns
// the script errors and uncaught exceptions the pages logged. Without a
// chromium on PATH the test is skipped, or fails when FGRL_REQUIRE_CHROMIUM
// is set.
func Start(t testing.TB, timeout time.Duration) (context.Context, func() []string) {
	t.Helper()
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		if os.Getenv("FGRL_REQUIRE_CHROMIUM") != "" {
			t.Fatal("no chromium and FGRL_REQUIRE_CHROMIUM is set")
		}
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("headless", true), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(bctx, timeout)
	var mu sync.Mutex
	var errs []string
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				mu.Lock()
				errs = append(errs, m.String())
				mu.Unlock()
			}
		}
	}()
	var once sync.Once
	stop := func() []string {
		once.Do(func() {
			cancel()
			<-done
			cancelBrowser()
			cancelAlloc()
		})
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), errs...)
	}
	t.Cleanup(func() { stop() })
	return ctx, stop
}
