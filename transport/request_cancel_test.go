package transport

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRequestCancelEndsTheCall: a caller who gives up through the
// deprecated Request.Cancel (which net/http still honours) gets its error
// at once: the transport does not retry the cancelled request until its
// retry window ends. Before, it retried for about 12 s (the third attack
// on read coalescing saw it).
func TestRequestCancelEndsTheCall(t *testing.T) {
	var n atomic.Int32
	in := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		in <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &Transport{Base: base, TitleID: "1234567890", AllowInsecure: true}
	cancel := make(chan struct{})
	req, _ := http.NewRequest("GET", srv.URL+"/users/me", nil)
	req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
	//lint:ignore SA1019 the deprecated Cancel is what this test gives up through
	req.Cancel = cancel
	done := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(req)
		done <- err
	}()
	<-in
	close(cancel)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled request returned no error")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the call did not end within 3 s of its Request.Cancel")
	}
	if got := n.Load(); got != 1 {
		t.Errorf("the cancelled request was sent %d times, want 1", got)
	}
}
