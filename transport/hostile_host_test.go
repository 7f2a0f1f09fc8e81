package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestReadKeyNamesWhereTheRequestGoes: a read is shared only
// with calls that would get the same answer. The key's host is the Host
// header when one is set, else the URL's: a request sent to another server
// (the URL's host, where net/http connects) with Host naming the service,
// and a plain request to the service, share one key; so do http:// and
// https:// of one host (the scheme is not in the key). What the first
// server answered is then served from the cache to the second request,
// which never reaches the service.
func TestReadKeyNamesWhereTheRequestGoes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		firstURL   string
		firstHost  string
		allowPlain bool
	}{
		{"URL host vs Host header", "https://profile.example.net/users/me/profile/settings?settings=Gamertag", "profile.xboxlive.com", false},
		{"http vs https", "http://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r,
						Body: io.NopCloser(strings.NewReader("from " + r.URL.Scheme + "://" + r.URL.Host))}, nil
				})
				tr := &Transport{Base: base, TitleID: "1234567890", CoalesceReads: true, ReadCacheTTL: 10 * time.Second, AllowInsecure: tc.allowPlain}
				req, _ := http.NewRequest("GET", tc.firstURL, nil)
				req.Host = tc.firstHost
				req.Header.Set("Authorization", "XBL3.0 x=1111;token-a")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got, err := readAs(context.Background(), tr, nil) // https://profile.xboxlive.com/...
				if want := "200 from https://profile.xboxlive.com"; got != want {
					t.Errorf("a read of %s got %q, %v; want %q (the answer of the server it is sent to)", readURL, got, err, want)
				}
			})
		})
	}
}
