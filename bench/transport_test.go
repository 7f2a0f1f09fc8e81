package bench

import (
	"context"
	"flag"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const profileURL = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"

// okBase answers 200 in-process: the same base under every contender.
type okBase struct{}

func (okBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// benchUsers is how many users' tokens the transport benchmarks rotate
// through: enough that a run of any length stays under the budget's limits
// (100000 per window per user: 5 s of calls at 300 ns each is 16,000 per
// user), so no call waits or is refused.
const benchUsers = 1024

// usersFlag sets how many users the benchmarks' requests rotate through
// (go test ... -args -users 4), at least 4: with fewer, the state a
// transport keeps per user stays in the processor's caches from one call
// to the next.
var usersFlag = flag.Int("users", benchUsers, "the users the benchmarks' requests rotate through (at least 4)")

// requests returns *usersFlag GETs of url under ctx, each with the token of
// another user.
func requests(ctx context.Context, url string) []*http.Request {
	reqs := make([]*http.Request, max(*usersFlag, 4))
	for i := range reqs {
		reqs[i], _ = http.NewRequestWithContext(ctx, "GET", url, nil)
		reqs[i].Header.Set("Authorization", mock.Token(strconv.Itoa(2533274790000000+i), "1234567890"))
	}
	return reqs
}

func run(b *testing.B, rt http.RoundTripper) {
	runReqs(b, rt, requests(context.Background(), profileURL))
}

func runReqs(b *testing.B, rt http.RoundTripper, reqs []*http.Request) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		resp, err := rt.RoundTrip(reqs[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

// BenchmarkNoRetry: the overhead each RoundTripper adds to a call that
// succeeds at once is its ns/op minus base's. fgrl's budget uses limits high
// enough (100000 per window, benchUsers users) never to wait during a run.
func BenchmarkNoRetry(b *testing.B) {
	limits, err := limits.Read(strings.NewReader(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": 100000, "sustain": 100000}]}`))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("base", func(b *testing.B) { run(b, okBase{}) })
	b.Run("fgrl", func(b *testing.B) {
		run(b, &transport.Transport{Base: okBase{}, Limits: limits, TitleID: "1234567890"})
	})
	b.Run("fgrl-deadline", func(b *testing.B) {
		// Requests that carry their own deadline, earlier than the
		// per-attempt timeout: the transport then arms no timer.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		rt := &transport.Transport{Base: okBase{}, Limits: limits, TitleID: "1234567890"}
		runReqs(b, rt, requests(ctx, profileURL))
	})
	b.Run("retryablehttp", func(b *testing.B) {
		c := retryablehttp.NewClient()
		c.HTTPClient = &http.Client{Transport: okBase{}}
		c.Logger = nil
		run(b, &retryablehttp.RoundTripper{Client: c})
	})
}
