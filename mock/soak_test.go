package mock

import (
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// TestSoak loads a loopback mock with many distinct users for a while
// (FGRL_SOAK, default 3s; RELIABILITY.md records a run of minutes) and checks
// that memory stays bounded by the key cap. It records latency percentiles.
func TestSoak(t *testing.T) {
	soak := os.Getenv("FGRL_SOAK")
	if soak == "" || testing.Short() {
		t.Skip("a real-time loopback soak: set FGRL_SOAK to its duration (CI runs FGRL_SOAK=3s)")
	}
	d, err := time.ParseDuration(soak)
	if err != nil {
		t.Fatalf("FGRL_SOAK: %v", err)
	}
	const maxKeys, workers, maxRequests = 20_000, 16, 5_000_000
	s := NewServer(Must(New(Config{MaxKeys: maxKeys})))
	defer s.Close()
	client := s.Client()
	client.Transport.(*redirect).base.(*http.Transport).MaxIdleConnsPerHost = workers
	var mu sync.Mutex
	var lat []time.Duration
	var peakHeap uint64
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			var mine []time.Duration
			for i := 0; i < maxRequests/workers && time.Now().Before(stop); i++ {
				start := time.Now()
				soakCall(t, client, strconv.Itoa(2533274700000000+r.IntN(5_000_000)))
				mine = append(mine, time.Since(start))
				if w == 0 && i%2000 == 0 { // one worker samples the heap
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					mu.Lock()
					peakHeap = max(peakHeap, m.HeapAlloc)
					mu.Unlock()
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	keys := s.Handler.cfg.store.(*throttle.MemoryServerStore).Len()
	t.Logf("soak %v: %d requests (%.0f/s), p50 %v, p99 %v, max %v; %d keys held (cap %d); peak heap %d MiB",
		d, len(lat), float64(len(lat))/d.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1],
		keys, maxKeys, peakHeap>>20)
	if keys > maxKeys {
		t.Errorf("%d keys held, cap %d", keys, maxKeys)
	}
	if peakHeap > 256<<20 {
		t.Errorf("peak heap %d MiB", peakHeap>>20)
	}
}

func soakCall(t *testing.T, c *http.Client, xuid string) {
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
	req.Header.Set("Authorization", Token(xuid, "1234567890"))
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
