package whatif_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// TestReplayerHeapPerCall: a Replayer holds, per call added, the trace's
// analysis of it and 16 bytes to replay it (before: the 72-byte event the
// replay took: 123 bytes a call in all here; then 59 with a 40-byte record
// of analysis and a slice of calls grown by append; 28.8 with the
// analysis's calls encoded and the replay's in chunks).
func TestReplayerHeapPerCall(t *testing.T) {
	const n, users = 200_000, 100
	urls := [...]string{"https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "https://profile.xboxlive.com/users/batch/profile/settings", "https://social.xboxlive.com/users/me/people"}
	auths := make([]string, users)
	for u := range auths {
		auths[u] = "XBL3.0 x=" + strconv.Itoa(u) + ";R"
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	r, err := whatif.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	add := func(from, to int) {
		for i := from; i < to; i++ {
			r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 1800 * time.Microsecond), Method: "GET", URL: urls[i%3], Authorization: auths[i%users], Status: 200})
		}
	}
	add(0, 1000) // the users, their groups and the URLs, made once
	h0 := heap()
	add(1000, n)
	per := float64(heap()-h0) / (n - 1000)
	runtime.KeepAlive(r)
	t.Logf("%.1f bytes of heap per call added", per)
	if per > 40 {
		t.Errorf("%.1f bytes of heap per call added; want at most 40 (16 to replay, in chunks; about 9 of the analysis's, encoded, and its groups' open chunks)", per)
	}
}
