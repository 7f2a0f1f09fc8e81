package mock

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A third outside attack: an MPSD session write held the presence lock
// while its answer was written.

// bigSessionWrite is a session write whose answer (the document) is about
// 40 KB: more than a client's read buffers take before it reads the body.
func bigSessionWrite() string {
	return `{"members":{"me":{"constants":{"system":{"initialize":true}}}},"properties":{"custom":{"blob":"` +
		strings.Repeat("b", 40<<10) + `"}}}`
}

var thirdSession = "http://sessiondirectory.xboxlive.com/serviceconfigs/" + SCID(title1) + "/sessiontemplates/lobby/sessions/big"

// TestMPSDAnswerNotHeldUnderPresenceLock: an MPSD session write whose
// client is slow to read its answer (it has read the header, not the
// body, over a synchronous pipe) does not stop another user's presence
// write. Before, the write held the lock every presence change takes until
// its answer was written, and the presence write waited for the reader.
func TestMPSDAnswerNotHeldUnderPresenceLock(t *testing.T) {
	h := rtaHandler(t)
	hc := pipeServer(t, h)
	req, _ := http.NewRequest("PUT", thirdSession, strings.NewReader(bigSessionWrite()))
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := hc.Do(req) // the header arrives; the body is left unread, as a slow reader's
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("session write: %d", resp.StatusCode)
	}
	done := make(chan int, 1)
	go func() { // another user's presence write, in process
		req, _ := http.NewRequest("POST", lapseSet, strings.NewReader(`{"state":"active"}`))
		req.Header.Set("Authorization", Token(xuid2, title1))
		r, err := h.RoundTrip(req)
		if err != nil {
			done <- -1
			return
		}
		r.Body.Close()
		done <- r.StatusCode
	}()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Errorf("presence write: %d", code)
		}
		resp.Body.Close()
	case <-time.After(3 * time.Second):
		t.Errorf("xuid2's presence write still waits after 3 s, while xuid1's session answer waits for xuid1 to read it")
		resp.Body.Close() // lets the session's answer go (its connection closes)
		<-done
	}
}

// TestMPSDAnswerNotHeldBlocksSubscribe: as above, for the same lock an
// RTA subscribe answers under: another user's subscribe is answered while
// an MPSD answer waits for its reader.
func TestMPSDAnswerNotHeldBlocksSubscribe(t *testing.T) {
	h := rtaHandler(t)
	hc := pipeServer(t, h)
	ws := dialRTA(t, hc, xuid2)
	req, _ := http.NewRequest("PUT", thirdSession, strings.NewReader(bigSessionWrite()))
	req.Header.Set("Authorization", Token(xuid1, title1))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	write(t, ws, `[1,1,"`+devicesURI(xuid1)+`"]`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, _, err := ws.Read(ctx); err != nil {
		t.Errorf("xuid2's subscribe not answered in 3 s while xuid1's session answer waits for its reader: %v", err)
	}
}
