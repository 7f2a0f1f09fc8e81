package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestAttack46CoalCacheKeepsPastExpires: ReadCacheTTL's godoc promises it keeps
// each 200 answer "at most as long as it is still fresh: its Cache-Control
// max-age, else its Expires less its Date, less its Age" (the source cites
// RFC 9111 §4.2.1, §4.2.3, §5.3: Expires is the instant after which the
// answer is stale).
//
// The server generates an answer with Date D and Expires D+2 s (no
// max-age) and sends its body over 3 s. The transport reads the body in
// full before it stores the answer, and then counts the 2 s lifetime from
// the end of that read, not from D: at D+3.3 s, 1.3 s after the answer's
// own Expires, the same read with the same credentials is still answered
// from memory. The time the body took to arrive is never subtracted
// (RFC 9111 §4.2.3's response_delay; its Date says as much too).
func TestAttack46CoalCacheKeepsPastExpires(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		now := time.Now().UTC().Truncate(time.Second)
		w.Header().Set("Date", now.Format(http.TimeFormat))
		w.Header().Set("Expires", now.Add(2*time.Second).Format(http.TimeFormat))
		w.WriteHeader(200)
		io.WriteString(w, strings.Repeat("x", 10))
		w.(http.Flusher).Flush()
		if i == 1 {
			time.Sleep(3 * time.Second) // the body is slow: the answer ages as it comes
		}
		io.WriteString(w, "answer "+string(rune('0'+i)))
	}))
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport)
	defer base.CloseIdleConnections()
	tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: MaxReadCacheTTL, DisableBudget: true, Base: base,
		Policy: Policy{AttemptTimeout: 10 * time.Second}}
	read := func() (string, http.Header) {
		req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile", nil)
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), resp.Header
	}
	_, h := read()
	exp, err := http.ParseTime(h.Get("Expires"))
	if err != nil {
		t.Fatal(err)
	}
	if time.Until(exp) > 0 {
		t.Fatalf("the first read ended before its answer expired (%v left): the body was not slow enough", time.Until(exp))
	}
	past := time.Since(exp)
	body, _ := read()
	if n.Load() == 1 {
		t.Errorf("%v after the answer's own Expires (%s; Date %s), the read was answered from memory (%q), not sent: the cache kept a stale answer",
			past.Round(10*time.Millisecond), h.Get("Expires"), h.Get("Date"), body)
	}
}
