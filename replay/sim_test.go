package replay

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

func TestWorkedExampleNaive(t *testing.T) {
	p, l, err := WorkedExample(limits.Default())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), p, Options{Limits: l, Client: "naive"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{0, 15, 35, 35, 35, 5, "burst"},
		{15, 30, 28, 28, 63, 0, "-"},
		{30, 45, 21, 21, 84, 0, "-"},
		{45, 60, 36, 36, 120, 20, "both"},
		{60, 75, 24, 24, 144, 24, "sustain"},
		{75, 285, 0, 0, 144, 0, "-"},
		{285, 300, 4, 4, 148, 4, "sustain"},
	}
	if diff := cmp.Diff(want, res.Rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if res.Calls != 148 || res.Served != 95 || res.Server429s != 53 {
		t.Errorf("result %+v", res)
	}
}

func TestClients(t *testing.T) {
	p, l, err := WorkedExample(limits.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Clients {
		res, err := Run(context.Background(), p, Options{Limits: l, Client: c})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-6s served %3d, server 429s %3d, refused locally %3d, failed %d", c, res.Served, res.Server429s, res.Refused, res.Failed)
		if res.Served+res.Refused+res.Failed+throttledCalls(res) != res.Calls {
			t.Errorf("%s: outcomes do not add up: %+v", c, res)
		}
		if c == "fgrl" && (res.Server429s != 0 || res.Served < 90) {
			t.Errorf("fgrl: %+v", res)
		}
	}
}

func throttledCalls(r Result) int { return r.Calls - r.Served - r.Refused - r.Failed }

func TestReadPattern(t *testing.T) {
	for _, in := range patternForms {
		p, err := ReadPattern(strings.NewReader(in))
		if err != nil {
			t.Fatalf("ReadPattern(%q): %v", in, err)
		}
		want := Pattern{{0, "profile", "1", 10, 0, false, nil}, {seconds(15.5), "profile", "2", 3, seconds(1.5), false, nil}, {seconds(20), "social", "3", 2, 0, true, nil}}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("ReadPattern(%q) mismatch (-want +got):\n%s", in, diff)
		}
	}
}

// patternErrorTests are ReadPattern's refusals; FuzzReadPattern starts
// from them and from the accepted forms.
var patternErrorTests = []struct{ in, want string }{
	{"", "pattern: empty: no event"},
	{"0,profile,1", "pattern: line 1: want time,service,user,count[,spread[,priority]], found 3 fields"},
	{"0,profile,1,2\n0,profile,1,2,0,later", `pattern: line 2: priority: "later" is not interactive or background`},
	{"0,profile,1,2,0,background,x", "pattern: line 1: want time,service,user,count[,spread[,priority]], found 7 fields"},
	{"0,profile,1,x", "pattern: line 1: count: not a whole number"},
	{"0,profile,1,1,soon", "pattern: line 1: spread: not a number"},
	{"-1,profile,1,1", "pattern: line 1: time: -1 is outside 0..604800 s"},
	{"NaN,profile,1,1", "pattern: line 1: time: NaN is outside 0..604800 s"},
	{"0,,1,1", "pattern: line 1: service: empty"},
	{"0,profile,a b,1", `pattern: line 1: user: "a b" is not a XUID`},
	{"0,profile,xuid(1),1", `pattern: line 1: user: "xuid(1)" is not a XUID`},
	{"0,profile,01,1", `pattern: line 1: user: "01" is not a XUID`},
	{"0,profile,1,0", "pattern: line 1: count: 0 is outside 1..2000000"},
	{"0,profile,1,\"2", "pattern: line 1: not CSV: extraneous or missing"},
	{"0,profile,1,2000000\n0,profile,1,2000000", "pattern: the pattern makes more than 2000000 calls"},
	{strings.Repeat("0,p,1,1\n", MaxEvents+1), "pattern: line 100001: more than 100000 events"},
	{`[{"time":0,"service":"p","user":"1","count":1,"extra":1}]`, "pattern: line 1: [0].extra: no such field"},
	{`[{"time":0,"service":"p","user":"1","count":1,"count":2}]`, "pattern: line 1: [0].count: named twice"},
	{`[{"time":"x"}]`, "pattern: line 1: [0].time: a string where a number belongs"},
	{"[{\"time\":0,\"service\":\"p\",\"user\":\"1\",\"count\":1},\n{\"time\":0,\"service\":\"p\",\"user\":\"a\",\"count\":1}]", `pattern: line 2: [1].user: "a" is not a XUID`},
	{`[{"time":0,"service":"p","user":"1","count":1}`, "pattern: line 1: the file ends inside the document"},
	{"[" + strings.Repeat("{},\n", MaxEvents) + "{}]", "pattern: line 100001: more than 100000 entries"},
	{"[]", "pattern: empty: no event"},
}

var patternForms = []string{
	"time,service,user,count,spread,priority\n0,profile,1,10\n15.5,profile,2,3,1.5,interactive\n20,social,3,2,,background\n",
	`[{"time":15.5,"service":"profile","user":"2","count":3,"spread":1.5},{"time":0,"service":"profile","user":"1","count":10},{"time":20,"service":"social","user":"3","count":2,"priority":"background"}]`,
}

func TestReadPatternErrors(t *testing.T) {
	for _, tt := range patternErrorTests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := ReadPattern(strings.NewReader(tt.in))
			var de *datafile.Error
			if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("ReadPattern(%.60q) = %v, want a *datafile.Error %q...", tt.in, err, tt.want)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	p := Pattern{{At: 0, Service: "nope", User: "1", Count: 1}}
	if _, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: "naive"}); err == nil {
		t.Error("unknown service accepted")
	}
	p[0].Service = "profile"
	if _, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: "curl"}); err == nil {
		t.Error("unknown client accepted")
	}
}

// FuzzReadPattern: a pattern read is bounded in calls and span; what is
// refused is a *datafile.Error of at most 400 bytes.
func FuzzReadPattern(f *testing.F) {
	for _, in := range patternForms {
		f.Add(in)
	}
	for _, tt := range patternErrorTests {
		if len(tt.in) < 4<<10 { // the long ones only slow the mutator down
			f.Add(tt.in)
		}
	}
	f.Add("0,profile,1,1,NaN")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadPattern(strings.NewReader(in))
		if err != nil {
			var de *datafile.Error
			if !errors.As(err, &de) || len(err.Error()) > 400 {
				t.Fatalf("ReadPattern error %T %q, want a *datafile.Error of at most 400 bytes", err, err)
			}
			return
		}
		if p.Calls() < 1 || p.Calls() > MaxCalls || p.End() < 0 || p.End() > 2*MaxSpan {
			t.Fatalf("accepted %q: %d calls ending at %v", in, p.Calls(), p.End())
		}
	})
}

// TestRequestsServed: the call the simulator makes for each scope of the
// limits is one the mock serves (or, for a service the mock only counts,
// counts), so every simulated call counts as it would at the service.
func TestRequestsServed(t *testing.T) {
	for _, rev := range limits.Revisions() {
		l, err := limits.Revision(rev)
		if err != nil {
			t.Fatal(err)
		}
		h := mock.Must(mock.New(mock.Config{Limits: l}))
		for _, r := range l.Rules {
			if r.Named || strings.Contains(r.Hosts[0], "*") {
				continue
			}
			const user = "2533274790000001"
			method, path, body := serviceCall(l, &Event{Service: r.Scope(), User: user})
			req := httptest.NewRequest(method, "https://"+r.Hosts[0]+path, strings.NewReader(body))
			req.Header.Set("Authorization", mock.Token(user, "1234567890"))
			h.ServeHTTP(httptest.NewRecorder(), req)
			d, err := h.Counts(throttle.Key{User: mock.UserHash(user), Title: "1234567890", Scope: r.Scope()})
			if err != nil || d.Sustain.Count != 1 {
				t.Errorf("%s %s: %s %s counted %d (%v), want 1", rev, r.Scope(), method, path, d.Sustain.Count, err)
			}
		}
	}
}

// TestPlannerMatchesSimulation: the poll planner's verdict is what the
// service does. Polled at the planner's fastest safe interval for 20
// minutes, a plain client collects no 429; a little faster, it does.
func TestPlannerMatchesSimulation(t *testing.T) {
	l := limits.Default()
	for _, tc := range []struct {
		scope string
		count int
	}{{"social", 1}, {"presence/read", 3}, {"profile", 2}} {
		plan, err := l.Plan([]limits.PeriodicCall{{Scope: tc.scope, Every: time.Hour, Count: tc.count}})
		if err != nil {
			t.Fatal(err)
		}
		fastest := plan[0].Fastest
		for _, every := range []time.Duration{fastest, fastest - fastest/20} {
			var p Pattern
			for at := time.Duration(0); at < 20*time.Minute; at += every {
				p = append(p, Event{At: at, Service: tc.scope, User: ExampleUser, Count: tc.count})
			}
			res, err := Run(context.Background(), p, Options{Limits: l, Client: "naive"})
			if err != nil {
				t.Fatal(err)
			}
			check, _ := l.Plan([]limits.PeriodicCall{{Scope: tc.scope, Every: every, Count: tc.count}})
			if safe := check[0].Safe(); safe != (res.Server429s == 0) || (every == fastest) != safe {
				t.Errorf("%s x%d every %v: the planner says safe=%v, the simulation saw %d 429s", tc.scope, tc.count, every, safe, res.Server429s)
			}
		}
	}
}

// TestMixedWorkload: the shipped mixed workload (examples/mixed.csv)
// through fgrl: no server 429 for any of it; with --coalesce fewer
// requests for the same calls; and on the key a background job shares with
// interactive reads, the interactive calls wait for nothing, where they
// queue behind the job when it is not marked background.
func TestMixedWorkload(t *testing.T) {
	p, err := LoadPattern("../examples/mixed.csv")
	if err != nil {
		t.Fatal(err)
	}
	run := func(p Pattern, coalesce bool) Result {
		t.Helper()
		res, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: "fgrl", Coalesce: coalesce})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	plain, coalesced := run(p, false), run(p, true)
	for _, r := range []Result{plain, coalesced} {
		if r.Server429s != 0 || r.Failed != 0 {
			t.Errorf("coalesce %v: %d server 429s, %d failed; want none", r.Sent < plain.Sent, r.Server429s, r.Failed)
		}
	}
	if coalesced.Sent >= plain.Sent || coalesced.Served < plain.Served {
		t.Errorf("coalescing sent %d requests and served %d calls, without %d and %d: want fewer requests, no fewer served",
			coalesced.Sent, coalesced.Served, plain.Sent, plain.Served)
	}
	// The profile key: the job and the interactive reads, these told apart
	// by a service name of their own (their request is profile's).
	var shared Pattern
	for _, e := range p {
		if e.Service == "profile" && !e.Background {
			e.Service, e.Req = "profile (ui)", &Request{Method: "GET", URL: "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"}
		}
		if strings.HasPrefix(e.Service, "profile") {
			shared = append(shared, e)
		}
	}
	ui := func(r Result) Delay {
		for _, s := range r.Services {
			if s.Service == "profile (ui)" {
				return s.Delay
			}
		}
		t.Fatalf("no interactive reads in %+v", r.Services)
		return Delay{}
	}
	if d := ui(run(shared, false)); d.MaxMs != 0 || d.Refused != 0 || d.Calls != 6 {
		t.Errorf("interactive calls beside a background job: %+v, want 6 that wait for nothing", d)
	}
	for i := range shared {
		shared[i].Background = false
	}
	if d := ui(run(shared, false)); d.MaxMs == 0 && d.Refused == 0 {
		t.Errorf("with the job unmarked the interactive reads went at once (%+v); want them queued or refused behind it", d)
	}
}

// TestServiceLimitsLearned: a service whose profile burst drifted from the
// clients' table (examples/drift.json: 6, the table 10) answers bursts of
// 8 profile reads 20 s apart. The fgrl client's first 429 teaches it the
// limit, so it collects one; a plain client collects two a burst.
func TestServiceLimitsLearned(t *testing.T) {
	drift, err := limits.Load("../examples/drift.json")
	if err != nil {
		t.Fatal(err)
	}
	var p Pattern
	for at := time.Duration(0); at < time.Minute; at += 20 * time.Second {
		p = append(p, Event{At: at, Service: "profile", User: ExampleUser, Count: 8})
	}
	got := map[string]int{}
	for _, c := range []string{"naive", "fgrl"} {
		res, err := Run(context.Background(), p, Options{Limits: limits.Default(), ServiceLimits: drift, Client: c})
		if err != nil {
			t.Fatal(err)
		}
		got[c] = res.Server429s
	}
	if diff := cmp.Diff(map[string]int{"naive": 6, "fgrl": 1}, got); diff != "" {
		t.Errorf("server 429s (-want +got):\n%s", diff)
	}
}

// TestSubscribedReplacesPolling: the subscribed client sends one read a
// user and scope whose changes RTA pushes (presence, social, MPSD
// sessions: limits.SubscriptionFor) and no other; writes and scopes
// without a subscription (profile) go through the fgrl transport.
func TestSubscribedReplacesPolling(t *testing.T) {
	const u1, u2 = "2533274791234567", "2533274792222222"
	p := Pattern{
		{At: 0, Service: "presence/read", User: u1, Count: 300, Spread: 10 * time.Minute},
		{At: 0, Service: "presence/read", User: u2, Count: 300, Spread: 10 * time.Minute},
		{At: 0, Service: "social", User: u1, Count: 120, Spread: 10 * time.Minute},
		{At: 0, Service: "presence/write", User: u1, Count: 3, Spread: 10 * time.Minute},
		{At: 0, Service: "profile", User: u1, Count: 5, Spread: 10 * time.Minute},
	}
	res, err := Run(context.Background(), p, Options{Limits: limits.Default(), Client: Subscribed})
	if err != nil {
		t.Fatal(err)
	}
	got := struct{ Calls, Sent, Served, Subscriptions, Pushed, Server429s int }{res.Calls, res.Sent, res.Served, res.Subscriptions, res.Pushed, res.Server429s}
	want := struct{ Calls, Sent, Served, Subscriptions, Pushed, Server429s int }{728, 3 + 3 + 5, 728, 3, 720 - 3, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscribed (-want +got):\n%s", diff)
	}
}
