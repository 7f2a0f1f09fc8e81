package whatif_test

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

// TestHeapPerCallPastTheBound: past MaxURLBytes (lowered to 64 KiB),
// calls of one path with a query of their own each (a cache-buster, a
// page number: the query dropped, the verdict after Incomplete) are one
// request to the replay; it kept a URL, a User-Agent, a kind and a
// replay.Request of each call's own, about 15 times the 16 bytes a call
// the Replayer holds beside the analysis (past the analysis's own cost
// of a distinct URL).
func TestHeapPerCallPastTheBound(t *testing.T) {
	whatif.SetMaxURLBytes(t, 64<<10)
	const n = 200_000
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	perCall := func(query, alone bool) float64 {
		var r interface{ Add(*analyze.Call) }
		var err error
		if alone {
			r, err = analyze.New(nil, nil)
		} else {
			r, err = whatif.New(nil, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		add := func(from, to int) {
			for i := from; i < to; i++ {
				url := "https://userpresence.xboxlive.com/users/xuid(2533274791234567)"
				if query {
					url += "?cb=" + strconv.Itoa(i)
				}
				r.Add(&analyze.Call{Index: i, Time: t0.Add(time.Duration(i) * 1800 * time.Microsecond), Method: "GET", URL: url,
					UserAgent: "MyTitle/1.0", Authorization: "XBL3.0 x=1;R", Status: 200})
			}
		}
		add(0, 1000) // past the bound from here
		h0 := heap()
		add(1000, n)
		per := float64(heap()-h0) / (n - 1000)
		runtime.KeepAlive(r)
		return per
	}
	analysis, distinct := perCall(true, true), perCall(true, false)
	t.Logf("heap per call: %.1f bytes for the analysis alone, %.1f with the replay's, past the bound", analysis, distinct)
	if distinct > analysis+40 { // 16 to replay, in chunks, as under the bound (TestReplayerHeapPerCall)
		t.Errorf("%.1f bytes of heap a call past the bound, %.1f of them the analysis's: the calls the replay sends alike are kept each on its own", distinct, analysis)
	}
}
