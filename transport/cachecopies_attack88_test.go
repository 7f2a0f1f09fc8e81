package transport_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestAttack88SharedAnswerIsEachCallersCopy: CoalesceReads' godoc: the
// answer is "read in full ... and copied to each"; ReadCacheTTL's: "the
// same read ... made again within it is answered from memory".
//
// held: callers sharing a flight, then callers answered from the cache,
// each scribble over their header values in place (the slice's own
// array), add and delete headers, change the trailer, status and length,
// and read part of the body: every other caller sees the answer as sent.
func TestAttack88SharedAnswerIsEachCallersCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const body = "the whole body of the answer"
		base := &attack88Base{
			hold: func(*http.Request) { time.Sleep(100 * time.Millisecond) },
			answer: func(r *http.Request) *http.Response {
				resp := attack88OK(r, body, http.Header{"X-A": {"one", "two"}, "Content-Type": {"application/json"}})
				resp.Trailer = http.Header{"X-T": {"t"}}
				return resp
			},
		}
		tr := attack88Transport(base)
		auth := attack88Auth("1111", "token-a")
		check := func(who string, resp *http.Response) {
			t.Helper()
			if got := resp.Header["X-A"]; len(got) != 2 || got[0] != "one" || got[1] != "two" {
				t.Errorf("%s: X-A is %q", who, got)
			}
			if resp.Header.Get("X-Evil") != "" || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: headers %v", who, resp.Header)
			}
			if resp.Trailer.Get("X-T") != "t" {
				t.Errorf("%s: trailer %v", who, resp.Trailer)
			}
			if resp.StatusCode != 200 {
				t.Errorf("%s: status %d", who, resp.StatusCode)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != body {
				t.Errorf("%s: body %q", who, b)
			}
		}
		scribble := func(resp *http.Response) {
			resp.Header["X-A"][0] = "MUTATED"
			resp.Header["X-A"] = append(resp.Header["X-A"][:1], "APPENDED")
			resp.Header.Set("X-Evil", "1")
			resp.Header.Del("Content-Type")
			resp.Trailer["X-T"][0] = "MUTATED"
			resp.StatusCode, resp.ContentLength = 500, 1
			p := make([]byte, 4)
			resp.Body.Read(p)
			resp.Body.Close()
		}
		for round, from := range []string{"flight", "cache"} {
			resps := make([]*http.Response, 4)
			var fs []func()
			for i := range 4 {
				fs = append(fs, func() {
					time.Sleep(time.Duration(i) * time.Millisecond)
					r, err := tr.RoundTrip(attack88Req(context.Background(), attack88URL, auth))
					if err != nil {
						t.Error(err)
						return
					}
					if i%2 == 0 {
						scribble(r)
					}
					resps[i] = r
				})
			}
			attack88Concurrently(fs...)
			for i := 1; i < 4; i += 2 {
				if resps[i] != nil {
					check(from+" caller "+string(rune('0'+i)), resps[i])
				}
			}
			if n := base.n.Load(); n != 1 {
				t.Errorf("round %d: %d requests, want 1", round, n)
			}
		}
		last := attack88Req(context.Background(), attack88URL, auth)
		r, err := tr.RoundTrip(last)
		if err != nil {
			t.Fatal(err)
		}
		check("the last caller", r)
		if r.Request != last || !strings.Contains(r.Request.Header.Get("Authorization"), "token-a") {
			t.Errorf("the answer's Request is not the caller's own")
		}
	})
}
