package mock

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// attackAlloc returns the bytes allocated while f ran.
func attackAlloc(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestAttackRemoteConnectBodyBounded: every other login.live.com form is read
// up to 64 KiB (readForm); the device-code page's POST
// (oauth20_remoteconnect.srf, the otc form) goes through
// http.Request.ParseForm, which reads and parses up to 10 MB. One
// request of 8 MiB of form must not cost the mock megabytes.
func TestAttackRemoteConnectBodyBounded(t *testing.T) {
	h := NewHandler()
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, "https://login.live.com/oauth20_remoteconnect.srf", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := h.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	post("otc=ABCD") // the handler's first call, its setup not counted
	body := "otc=" + strings.Repeat("A", 8<<20)
	var status int
	n := attackAlloc(func() { status = post(body) })
	t.Logf("status %d, %d bytes allocated for an 8 MiB form", status, n)
	if n > 1<<20 {
		t.Errorf("an 8 MiB form to oauth20_remoteconnect.srf allocated %d bytes, want at most 1 MiB (a 64 KiB bound, as readForm's)", n)
	}
}
