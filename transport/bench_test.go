package transport

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

// okBase answers 200 with a fixed body and reuses nothing from the request.
type okBase struct{}

func (okBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// The no-retry overhead, side by side with the bare base and
// go-retryablehttp, is measured in the bench module (bench/transport_test.go),
// which may depend on peers; BenchmarkUsers here shows how it grows.

// stepClock is a virtual clock for benchmarks that the benchmark advances
// itself, so a run covers as much virtual time as it needs and no budget
// runs out. Nothing ever sleeps on it.
type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func (c *stepClock) Sleep(context.Context, time.Duration) error { return nil }

func (c *stepClock) AfterFunc(time.Duration, func()) clock.Stopper { return noStop{} }

type noStop struct{}

func (noStop) Stop() bool { return true }

// BenchmarkUsers shows how the transport's cost grows with distinct users:
// each call is for the next of n users, with virtual time advancing so that
// every call is admitted (a user calls every 11 s of virtual time, under
// profile's 30 per 300 s), so with large n the budget holds n keys.
func BenchmarkUsers(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tokens := make([]string, n)
			for i := range tokens {
				tokens[i] = "XBL3.0 x=" + strconv.Itoa(i) + ";t"
			}
			tr := &Transport{Base: okBase{}, TitleID: title}
			// A user's calls are 11 s apart: under 30 per 301 s.
			clk := &stepClock{t: time.Unix(0, 0)}
			step := 11 * time.Second / time.Duration(n)
			ctx := clock.With(context.Background(), clk)
			req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
			req.Header.Set("Authorization", tokens[0])
			auth := req.Header["Authorization"]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				auth[0] = tokens[i%n]
				clk.t = clk.t.Add(step)
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkCoalescedRead is a read answered from the read cache
// (CoalesceReads, ReadCacheTTL) beside one sent through the transport, for
// the same user and URL: what a repeated read costs once coalesced.
func BenchmarkCoalescedRead(b *testing.B) {
	for _, cached := range []bool{false, true} {
		b.Run(map[bool]string{false: "sent", true: "cached"}[cached], func(b *testing.B) {
			tr := &Transport{Base: okBase{}, TitleID: title, CoalesceReads: cached, ReadCacheTTL: 10 * time.Second}
			clk := &stepClock{t: time.Unix(0, 0)}
			ctx := clock.With(context.Background(), clk)
			req, _ := http.NewRequestWithContext(ctx, "GET", profileURL, nil)
			req.Header.Set("Authorization", "XBL3.0 x=1;t")
			b.ReportAllocs()
			for b.Loop() {
				if !cached {
					clk.t = clk.t.Add(11 * time.Second) // under profile's 30 per 300 s
				}
				resp, err := tr.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
