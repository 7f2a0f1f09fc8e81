package transport

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// okBase answers 200 with a fixed body and reuses nothing from the request.
type okBase struct{}

func (okBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// benchUsers rotates callers so that no budget runs out during a run: 64
// users under limits of 100000 per window admit millions of calls.
func benchRequests(b *testing.B) []*http.Request {
	reqs := make([]*http.Request, 64)
	for i := range reqs {
		reqs[i], _ = http.NewRequest("GET", profileURL, nil)
		reqs[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), title))
	}
	return reqs
}

func benchLimits(b *testing.B) *throttle.Limits {
	l, err := throttle.Parse([]byte(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func benchRT(b *testing.B, rt http.RoundTripper) {
	reqs := benchRequests(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		resp, err := rt.RoundTrip(reqs[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// BenchmarkNoRetry measures the transport's overhead on calls that succeed
// at once, side by side with the bare base: the difference is what the
// transport adds (rule match, Retry-After cache, budget, per-attempt
// timeout).
func BenchmarkNoRetry(b *testing.B) {
	b.Run("base", func(b *testing.B) { benchRT(b, okBase{}) })
	b.Run("transport", func(b *testing.B) { benchRT(b, &Transport{Base: okBase{}, Limits: benchLimits(b), TitleID: title}) })
	b.Run("transport-no-budget", func(b *testing.B) {
		benchRT(b, &Transport{Base: okBase{}, DisableBudget: true, TitleID: title})
	})
}
