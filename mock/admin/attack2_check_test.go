package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestCheckSecondObjectPastBound: a check's body holding a second JSON
// object is refused (400) wherever that object is. Before: a second object
// past the 64 KiB the check reads (the first object, then 64 KiB of
// spaces, then {"bogus":1}) was never read, and the check answered 200 ok.
func TestCheckSecondObjectPastBound(t *testing.T) {
	srv := serveAll(t, mock.NewHandler())
	body := `{"no429":true}` + strings.Repeat(" ", maxBody) + `{"bogus":1}`
	var e apiError
	if code := api(t, srv, "POST", "/_fgrl/api/check", body, &e); code < 400 || code > 499 || e.Error == "" {
		t.Errorf("a second object past %d bytes: %d %+v, want a 4xx refusal", maxBody, code, e)
	}
}

// TestCheckSinceInTheFuture: a check whose window starts after the
// mock's clock looks at no call and passes nothing. Before: --no-429 (and
// an expectation of 0 calls) with since an hour ahead answered 200 ok
// though the mock had answered 429s.
func TestCheckSinceInTheFuture(t *testing.T) {
	h := mock.NewHandler()
	if err := h.SetFaults(mock.Faults{Services: []mock.ServiceFault{{Service: "profile", Status: http.StatusTooManyRequests}}}); err != nil {
		t.Fatal(err)
	}
	srv := serveAll(t, h)
	if code := getProfile(t, srv); code != http.StatusTooManyRequests {
		t.Fatalf("profile read under a 429 fault: %d, want 429", code)
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	for _, body := range []string{
		`{"no429":true,"since":"` + future + `"}`,
		`{"expect":[{"status":429,"count":0}],"since":"` + future + `"}`,
		`{"expect":[{"status":429,"count":0,"since":"` + future + `"}]}`,
	} {
		var res mock.CheckResult
		if code := api(t, srv, "POST", "/_fgrl/api/check", body, &res); code == http.StatusOK || res.OK {
			t.Errorf("check %s: %d %+v, want no pass", body, code, res)
		}
	}
}
