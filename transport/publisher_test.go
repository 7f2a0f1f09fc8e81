package transport

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

// TestBudgetKeepsPublisherSustain: a rule whose sustain per user +
// publisher is below its sustain per user + title (limits.Rule.ClientLimit)
// bounds the budget by it: the publisher's counter counts every call the
// title's does (SPEC.md section 2). With 2 per publisher and 10 per title,
// the third call is refused locally and never sent.
func TestBudgetKeepsPublisherSustain(t *testing.T) {
	l, err := limits.Read(strings.NewReader(`{"rules": [{"service": "collections", "hosts": ["collections.mp.microsoft.com"], "burst": 10, "sustain": 10, "publisherSustain": 2, "store": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int32
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})
	tr := &Transport{Base: base, Limits: l, TitleID: "1234567890", Margin: -1}
	ctx := WithPolicy(context.Background(), Policy{FailFast: true})
	var refused int
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, "POST", "https://collections.mp.microsoft.com/v9.0/collections/query", strings.NewReader("{}"))
		req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
		resp, err := tr.RoundTrip(req)
		var te *ThrottleError
		switch {
		case err == nil:
			resp.Body.Close()
		case errors.As(err, &te) && te.Local:
			refused++
		default:
			t.Fatal(err)
		}
	}
	if sent.Load() != 2 || refused != 1 {
		t.Errorf("3 calls against a publisher sustain of 2: %d sent, %d refused locally; want 2 and 1", sent.Load(), refused)
	}
}
