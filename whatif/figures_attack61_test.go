package whatif_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/whatif"
)

func attack61Presence(idx int, at time.Duration, user string, status int) analyze.Call {
	c := analyze.Call{Index: idx, Time: t0.Add(at), Method: "GET",
		URL: "https://userpresence.xboxlive.com/users/xuid(2533274791234567)", Authorization: "XBL3.0 x=" + user + ";SECRETattack61tok", Status: status}
	if status == 429 {
		c.RetryAfter = "15"
	}
	return c
}

func attack61Run(t *testing.T, calls []analyze.Call, parts int) (*whatif.Result, error) {
	t.Helper()
	r, err := whatif.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if parts > 0 {
		whatif.SetParts(r, parts)
	}
	for i := range calls {
		r.Add(&calls[i])
	}
	r.AddInput(analyze.Input{Name: "atk.har", Calls: len(calls)})
	return r.Run(context.Background())
}

func attack61Svc(res *whatif.Result, name string) whatif.Service {
	for _, s := range res.Services {
		if s.Service == name {
			return s
		}
	}
	return whatif.Service{}
}

// held: "Each user of the trace calls at the recorded times ... through a
// transport that keeps every window within the share of its limits the
// analyzer warns past (Rules.NearLimit, 90 %)": presence read is burst 30 /
// 15 s, so two users making 20 calls each at one instant are each within
// 27 and none is held; one user making 40 is held for 40-27 = 13 calls.
// ("one user's calls counted against or delayed by another user's keys")
func TestAttack61FiguresPerUser(t *testing.T) {
	for _, parts := range []int{1, 4} {
		var two []analyze.Call
		for i := range 40 {
			two = append(two, attack61Presence(i, 0, strconv.Itoa(100+i%2), 200))
		}
		res, err := attack61Run(t, two, parts)
		if err != nil {
			t.Fatal(err)
		}
		s := attack61Svc(res, "presence/read")
		t.Logf("parts %d two users: %+v result calls %d served %d delayed %d refused %d", parts, s, res.Calls, res.Served, res.Delayed, res.Refused)
		if res.Calls != 40 || s.Calls != 40 || s.Delayed != 0 || s.Refused != 0 || s.Fgrl429s != 0 || res.Served != 40 {
			t.Errorf("parts %d: two users of 20 calls: %+v (served %d); want 40 calls, none held", parts, s, res.Served)
		}
		var one []analyze.Call
		for i := range 40 {
			one = append(one, attack61Presence(i, 0, "100", 200))
		}
		res, err = attack61Run(t, one, parts)
		if err != nil {
			t.Fatal(err)
		}
		s = attack61Svc(res, "presence/read")
		t.Logf("parts %d one user: %+v result calls %d served %d delayed %d refused %d", parts, s, res.Calls, res.Served, res.Delayed, res.Refused)
		if s.Delayed+s.Refused != 13 || s.Fgrl429s != 0 || res.Served+res.Refused != 40 || res.Delayed != s.Delayed {
			t.Errorf("parts %d: one user of 40 calls: %+v; want 13 held or refused, no 429", parts, s)
		}
	}
}

// held: "Unreproduced ... Counted per user: one user's held calls explain no
// other user's 429s." User 100 makes 40 calls at once (13 held by fgrl, none
// 429 in the trace); user 200 makes 5 calls, 3 answered 429 in the trace:
// fgrl holds none of 200's, so presence/read's 429s are unreproduced.
func TestAttack61UnreproducedPerUser(t *testing.T) {
	var calls []analyze.Call
	for range 40 {
		calls = append(calls, attack61Presence(len(calls), 0, "100", 200))
	}
	for i := range 5 {
		st := 200
		if i >= 2 {
			st = 429
		}
		calls = append(calls, attack61Presence(len(calls), time.Duration(i)*time.Second, "200", st))
	}
	res, err := attack61Run(t, calls, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("services %+v unreproduced %v", res.Services, res.Unreproduced)
	if s := attack61Svc(res, "presence/read"); s.Trace429s != 3 {
		t.Errorf("trace429s %d; want 3", s.Trace429s)
	}
	if strings.Join(res.Unreproduced, ",") != "presence/read" {
		t.Errorf("Unreproduced %v; want [presence/read]: user 100's held calls explain none of user 200's 429s", res.Unreproduced)
	}
}

// held: the replay is in virtual time ("replays a trace's calls ... in
// virtual time"): two calls six days apart replay in well under a second of
// real time, and a trace spanning ten years fails the what-if rather than
// wait or report.
func TestAttack61VirtualTimeGaps(t *testing.T) {
	calls := []analyze.Call{attack61Presence(0, 0, "100", 200), attack61Presence(1, 6*24*time.Hour, "100", 200)}
	start := time.Now()
	res, err := attack61Run(t, calls, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a six-day gap took %v of real time", d)
	}
	if res.Calls != 2 || res.Served != 2 {
		t.Errorf("calls %d served %d; want 2, 2", res.Calls, res.Served)
	}
	ten := []analyze.Call{attack61Presence(0, 0, "100", 200), attack61Presence(1, 10*365*24*time.Hour, "100", 200), attack61Presence(2, -5*365*24*time.Hour, "100", 200)}
	start = time.Now()
	res, err = attack61Run(t, ten, 0)
	t.Logf("ten years: %v (%v)", err, time.Since(start))
	if err == nil {
		t.Errorf("a trace over ten years reported %s after; want an error", res.After.Verdict)
	}
}

// "A call the replay cannot send fails the what-if." A judged call (its host
// is presence's, with a token) whose method or URL Go cannot send must not
// leave a clean "after": either Run fails, or the call was not judged at all.
func TestAttack61CannotSend(t *testing.T) {
	bad := []struct{ name, method, url string }{
		{"method-space", "GE T", "https://userpresence.xboxlive.com/users/xuid(1)"},
		{"method-empty", "", "https://userpresence.xboxlive.com/users/xuid(1)"},
		{"bad-port", "GET", "https://userpresence.xboxlive.com:99999/users/xuid(1)"},
		{"bad-escape", "GET", "https://userpresence.xboxlive.com/users/xuid(1)/%zz"},
		{"ctl-char", "GET", "https://userpresence.xboxlive.com/users/xuid(1)/\x7f\x01"},
		{"space-in-host", "GET", "https://userpresence.xboxlive.com /users/xuid(1)"},
		{"ipv6-broken", "GET", "https://[userpresence.xboxlive.com/users/xuid(1)"},
		{"bad-userinfo", "GET", "https://a%zz@userpresence.xboxlive.com/users/xuid(1)"},
		{"no-path-query", "GET", "userpresence.xboxlive.com?x=%"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			var calls []analyze.Call
			for i := range 40 {
				c := attack61Presence(i, time.Duration(i)*100*time.Millisecond, "100", 200)
				if i >= 30 {
					c.Status, c.RetryAfter = 429, "15"
				}
				if i%2 == 0 {
					c.Method, c.URL = b.method, b.url
				}
				calls = append(calls, c)
			}
			res, err := attack61Run(t, calls, 0)
			if err != nil {
				t.Logf("Run fails: %v", err)
				return
			}
			t.Logf("before %s (judged %d) after %s (judged %d) calls %d served %d refused %d", res.Before.Verdict, res.Before.Judged, res.After.Verdict, res.After.Judged, res.Calls, res.Served, res.Refused)
			if res.Calls != res.Before.Judged {
				t.Errorf("replayed %d of the %d judged calls", res.Calls, res.Before.Judged)
			}
			if res.Served+res.Refused+attack61Svc(res, "presence/read").Fgrl429s < res.Calls {
				t.Errorf("served %d + refused %d < calls %d and no error", res.Served, res.Refused, res.Calls)
			}
		})
	}
}
