// Command visits serves one request through a mock.Handler with the
// coverage counters cleared just before, so that the counters written to
// $GOCOVERDIR are that request's alone: which files of package mock it
// ran code in. TestRequestVisitsFewFiles builds it with -cover and reads
// them. Its argument is what the request meets: "served" (a counted
// profile read, served) or "429" (the same past the burst limit).
package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"runtime/coverage"

	"github.com/xblgo/fgrl/mock"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "visits:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 || args[0] != "served" && args[0] != "429" {
		return fmt.Errorf("usage: visits served|429")
	}
	h := mock.NewHandler()
	tok := mock.Token("2533274791234567", "1234567890")
	send := func() int {
		r := httptest.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		r.Header.Set("Authorization", tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	// A request first, so that what happens once (the journal's ring)
	// is not counted; then, for a 429, up to the burst limit.
	send()
	want := 200
	if args[0] == "429" {
		want = 429
		for range 9 {
			send()
		}
	}
	if err := coverage.ClearCounters(); err != nil {
		return err
	}
	if got := send(); got != want {
		return fmt.Errorf("status %d, want %d", got, want)
	}
	dir := os.Getenv("GOCOVERDIR")
	if err := coverage.WriteMetaDir(dir); err != nil {
		return err
	}
	return coverage.WriteCountersDir(dir)
}
