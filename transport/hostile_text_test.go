package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
)

// TestServerTextInEventsClipped: a 429 body's limitType and debugMessage
// go on to events (and from there to logs and span attributes) clipped and
// escaped: 8,000 bytes of escape codes each become at most 64 and 200 bytes
// with none.
func TestServerTextInEventsClipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hostile := strings.Repeat("\x1b[2J", 2000)
		body := `{"version":1,"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"` + strings.ReplaceAll(hostile, "\x1b", `\u001b`) + `","debugMessage":"` + strings.ReplaceAll(hostile, "\x1b", `\u001b`) + `"}`
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"15"}}, Request: r, Body: io.NopCloser(strings.NewReader(body))}, nil
		})
		var got []Event
		tr := &Transport{Base: base, TitleID: "1234567890", RetryWindow: -1, Observe: func(_ context.Context, e Event) {
			if e.Body != nil {
				got = append(got, e)
			}
		}}
		readAs(context.Background(), tr, nil)
		if len(got) == 0 {
			t.Fatal("no event carried the 429's body")
		}
		for _, e := range got {
			if b := e.Body; len(b.LimitType) > 64 || len(b.DebugMessage) > 200 || strings.ContainsRune(b.LimitType+b.DebugMessage, '\x1b') {
				t.Errorf("%s event: limitType of %d bytes, debugMessage of %d bytes, escape codes kept: %v", e.Kind, len(b.LimitType), len(b.DebugMessage), strings.ContainsRune(b.LimitType+b.DebugMessage, '\x1b'))
			}
		}
	})
}
