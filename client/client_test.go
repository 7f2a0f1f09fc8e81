package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

const (
	me    = "2533274791234567"
	other = "2533274799999999"
	title = "1234567890"
)

func mockTokens() TokenSource {
	return TokenFunc(func(_ context.Context, xuid string) (Token, error) {
		return Token{Authorization: mock.Token(xuid, title), Signature: "sig"}, nil
	})
}

// newClient returns a client on an in-process mock with the default
// transport settings (budget on), as a user would configure it for tests.
func newClient(t *testing.T, base http.RoundTripper, tr *transport.Transport) *Client {
	t.Helper()
	if tr == nil {
		tr = &transport.Transport{TitleID: title}
	}
	tr.Base = base
	c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var scid = mock.SCID(title)

// calls are every typed call, each in a form that succeeds on the mock, and
// each checks what it got: an empty result with a nil error fails.
var calls = []struct {
	name string
	do   func(ctx context.Context, u *User) error
}{
	{"GetProfiles", func(ctx context.Context, u *User) error {
		p, err := u.GetProfiles(ctx, []string{me, other}, []string{"Gamertag"})
		return check(err, len(p) == 2 && p[1].Settings["Gamertag"] == "Player9999", "profiles", p)
	}},
	{"GetProfile", func(ctx context.Context, u *User) error {
		p, err := u.GetProfile(ctx, other, []string{"Gamertag"})
		return check(err, p.XUID == other && p.Settings["Gamertag"] == "Player9999", "profile", p)
	}},
	{"GetPresence", func(ctx context.Context, u *User) error {
		p, err := u.GetPresence(ctx, other)
		return check(err, p.XUID == other && p.State != "", "presence", p)
	}},
	{"GetPresenceBatch", func(ctx context.Context, u *User) error {
		p, err := u.GetPresenceBatch(ctx, []string{me, other})
		return check(err, len(p) == 2 && p[0].XUID == me, "presence batch", p)
	}},
	{"SetPresence", func(ctx context.Context, u *User) error {
		return u.SetPresence(ctx, true, &RichPresence{SCID: scid, ID: "inMatch", Params: []string{"dust"}})
	}},
	{"GetPeople", func(ctx context.Context, u *User) error {
		p, err := u.GetPeople(ctx, me, 0, "")
		return check(err, p.TotalCount > 0 && len(p.Items) == p.TotalCount && p.Items[0].XUID != "", "people", p)
	}},
	{"CheckPermission", func(ctx context.Context, u *User) error {
		p, err := u.CheckPermission(ctx, "CommunicateUsingText", other)
		return check(err, p.IsAllowed, "permission", p)
	}},
	{"ListAchievements", func(ctx context.Context, u *User) error {
		p, err := u.ListAchievements(ctx, me, title, 2, "")
		return check(err, len(p.Items) == 2 && p.ContinuationToken != "" && p.Items[0].ServiceConfigID == scid, "achievements", p)
	}},
	{"GetAchievement", func(ctx context.Context, u *User) error {
		a, err := u.GetAchievement(ctx, me, scid, "1")
		return check(err, a.ID == "1" && a.Name != "" && len(a.Rewards) > 0, "achievement", a)
	}},
	{"UpdateAchievement", func(ctx context.Context, u *User) error {
		_, err := u.UpdateAchievement(ctx, scid, "1", 10) // changed the first time, 304 after
		return err
	}},
	{"GetStats", func(ctx context.Context, u *User) error {
		s, err := u.GetStats(ctx, me, scid, []string{"kills"})
		return check(err, s.XUID == me && len(s.Stats()) == 1 && s.Stats()[0].Value != "", "stats", s)
	}},
	{"GetStatsBatch", func(ctx context.Context, u *User) error {
		m, err := u.GetStatsBatch(ctx, []string{me, other}, scid, []string{"kills"})
		return check(err, len(m) == 2 && len(m[other].Stats()) == 1, "stats batch", m)
	}},
	{"GetLeaderboard", func(ctx context.Context, u *User) error {
		lb, err := u.GetLeaderboard(ctx, scid, "kills", 10, "")
		return check(err, len(lb.Items) == 10 && lb.Items[0].Rank == 1 && lb.Items[0].Value != "", "leaderboard", lb)
	}},
	{"WriteSession", func(ctx context.Context, u *User) error {
		// The caller joins (members.me): a user not a member may not write
		// a session it does not join (the mock answers 403, as MPSD does).
		doc, _, err := u.WriteSession(ctx, SessionRef{scid, "quick", "s1"}, map[string]any{"properties": map[string]any{},
			"members": map[string]any{"me": map[string]any{"constants": map[string]any{"system": map[string]any{"initialize": true}}}}})
		return check(err, len(doc) > 0, "session", string(doc))
	}},
	{"SendInvites", func(ctx context.Context, u *User) error {
		h, err := u.SendInvites(ctx, SessionRef{scid, "quick", "s1"}, []string{other})
		return check(err, len(h) == 1 && h[0].ID != "" && h[0].InvitedXUID == other, "invites", h)
	}},
	{"GetStatLeaderboard", func(ctx context.Context, u *User) error {
		lb, err := u.GetStatLeaderboard(ctx, scid, "kills", 10, "")
		return check(err, len(lb.Items) == 10 && lb.Column.StatName == "kills", "stat leaderboard", lb)
	}},
	{"GetSession", func(ctx context.Context, u *User) error {
		ref := SessionRef{scid, "quick", "s1"}
		doc, err := u.GetSession(ctx, ref)
		if errors.Is(err, hresult.HTTP_E_STATUS_NOT_FOUND) { // not written yet
			if _, _, err = u.WriteSession(ctx, ref, map[string]any{"properties": map[string]any{}}); err == nil {
				doc, err = u.GetSession(ctx, ref)
			}
		}
		return check(err, len(doc) > 0, "session", string(doc))
	}},
	{"CreateMatchTicket", func(ctx context.Context, u *User) error {
		mt, err := u.CreateMatchTicket(ctx, scid, "ranked", MatchTicketRequest{Session: SessionRef{scid, "quick", "s1"}, GiveUp: time.Minute})
		return check(err, mt.TicketID != "" && mt.WaitTime > 0, "ticket", mt)
	}},
	{"SubmitReputationFeedback", func(ctx context.Context, u *User) error {
		return u.SubmitReputationFeedback(ctx, other, Feedback{Type: "PositiveHelpfulPlayer"})
	}},
}

// check turns a call's result into an error: err itself, or one saying what
// was wrong with a result that came with a nil error.
func check(err error, ok bool, what string, got any) error {
	if err == nil && !ok {
		return fmt.Errorf("unexpected %s: %+v", what, got)
	}
	return err
}

func TestEveryCallSucceeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(t, mock.NewHandler(), nil)
		for _, tc := range calls {
			if err := tc.do(context.Background(), c.As(me)); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
	})
}

// TestEveryCallThrottled: calling each API until FGRL stops it ends in an
// *Error that errors.Is the 429 HRESULT and says the local budget refused
// it, with no 429 ever reaching the service.
func TestEveryCallThrottled(t *testing.T) {
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, RetryWindow: -1})
				var err error
				for i := 0; i < 400 && err == nil; i++ {
					err = tc.do(context.Background(), c.As(me))
				}
				var e *Error
				var te *transport.ThrottleError
				if !errors.As(err, &e) || !errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS) ||
					!errors.As(err, &te) || !te.Local || e.API != tc.name || hresult.Of(err) != hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS {
					t.Errorf("%v (%+v), want a local 429 refusal", err, e)
				}
			})
		})
	}
}

func TestServerThrottleDetails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, DisableBudget: true, RetryWindow: -1})
		var err error
		for i := 0; i < 11; i++ {
			err = calls[0].do(context.Background(), c.As(me))
		}
		var e *Error
		var te *transport.ThrottleError
		if !errors.As(err, &e) || e.StatusCode != 429 || !errors.As(err, &te) || te.Local ||
			te.Body == nil || te.Body.MaxRequests != 10 || te.Wait <= 0 {
			t.Fatalf("11th call: %v (%+v)", err, e)
		}
		if !strings.Contains(err.Error(), "profile.GetProfiles: 0x801901AD") {
			t.Errorf("message %q", err)
		}
	})
}

func TestErrors4xx(t *testing.T) {
	c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, RetryWindow: -1})
	u := c.As(me)
	ctx := context.Background()
	tests := []struct {
		name   string
		err    error
		code   hresult.HRESULT
		status int
	}{
		{"unknown session", func() error { _, err := u.GetSession(ctx, SessionRef{scid, "quick", "nope"}); return err }(), hresult.HTTP_E_STATUS_NOT_FOUND, 404},
		{"unknown achievement", func() error { _, err := u.GetAchievement(ctx, me, scid, "99"); return err }(), hresult.HTTP_E_STATUS_NOT_FOUND, 404},
		{"too many leaderboard rows", func() error { _, err := u.GetLeaderboard(ctx, scid, "x", 5000, ""); return err }(), hresult.HTTP_E_STATUS_BAD_REQUEST, 400},
		{"bad leaderboard token", func() error { _, err := u.GetLeaderboard(ctx, scid, "x", 0, "zz"); return err }(), hresult.HTTP_E_STATUS_BAD_REQUEST, 400},
		{"unknown feedback type", u.SubmitReputationFeedback(ctx, other, Feedback{Type: "Rude"}), hresult.HTTP_E_STATUS_BAD_REQUEST, 400},
		{"xuid not decimal", func() error { _, err := u.GetPresence(ctx, "xuid(1)"); return err }(), hresult.E_INVALIDARG, 0},
		{"xuid over 64 bits", func() error { _, err := u.GetPresence(ctx, "18446744073709551616"); return err }(), hresult.E_INVALIDARG, 0},
		{"scid not a GUID", func() error { _, err := u.GetStats(ctx, me, "abc", []string{"kills"}); return err }(), hresult.E_INVALIDARG, 0},
		{"stat name with a comma", func() error { _, err := u.GetStats(ctx, me, scid, []string{"a,b"}); return err }(), hresult.E_INVALIDARG, 0},
		{"too many xuids", func() error { _, err := u.GetProfiles(ctx, make([]string, 101), nil); return err }(), hresult.E_INVALIDARG, 0},
		{"empty xuid", func() error { _, err := u.GetProfiles(ctx, []string{me, ""}, nil); return err }(), hresult.E_INVALIDARG, 0},
		{"bad percent", func() error { _, err := u.UpdateAchievement(ctx, scid, "1", 101); return err }(), hresult.E_INVALIDARG, 0},
		{"no setting", func() error { _, err := u.CheckPermission(ctx, "", other); return err }(), hresult.E_INVALIDARG, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *Error
			if !errors.As(tt.err, &e) || !errors.Is(tt.err, tt.code) || e.StatusCode != tt.status {
				t.Errorf("%v, want %v (HTTP %d)", tt.err, tt.code, tt.status)
			}
		})
	}
	// The mock's JSON error body gives the message.
	_, err := u.GetSession(ctx, SessionRef{scid, "quick", "nope"})
	if e := (*Error)(nil); !errors.As(err, &e) || e.Message != "no such session" {
		t.Errorf("message from the body: %v", err)
	}
}

func TestNoToken(t *testing.T) {
	c, err := New(Config{TitleID: title, Tokens: StaticTokens{me: mock.Token(me, title)}, Transport: mock.NewHandler()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.As(other).GetPresence(context.Background(), me)
	if !errors.Is(err, hresult.E_XBL_AUTH_NO_TOKEN) || !errors.Is(err, ErrNoToken) {
		t.Errorf("no token: %v", err)
	}
	if _, err := c.As(me).GetPresence(context.Background(), me); err != nil {
		t.Errorf("static token: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, cfg := range []Config{
		{TitleID: title},
		{Tokens: mockTokens()},
		{Tokens: mockTokens(), TitleID: title, Endpoints: map[string]string{"profile.xboxlive.com": "not a url"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// recorder keeps the last request's headers and answers 200 "{}".
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	rec := httptest.NewRecorder()
	rec.WriteString("{}")
	return rec.Result(), nil
}

func TestHeaders(t *testing.T) {
	rec := &recorder{}
	c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: rec, AcceptLanguage: "fr-FR",
		Endpoints: map[string]string{"achievements.xboxlive.com": "http://127.0.0.1:9/prefix"}})
	if err != nil {
		t.Fatal(err)
	}
	u := c.As(me)
	ctx := context.Background()
	u.GetProfiles(ctx, []string{me}, nil)
	u.GetPresence(ctx, me)
	u.GetPeople(ctx, me, 0, "")
	u.ListAchievements(ctx, me, title, 0, "")
	u.GetSession(ctx, SessionRef{scid, "t", "n"})
	u.CreateMatchTicket(ctx, scid, "h", MatchTicketRequest{Session: SessionRef{scid, "t", "n"}, GiveUp: time.Minute})
	u.GetStats(ctx, me, scid, []string{"a"})
	type got struct{ Host, URL, Contract, Lang, CT, Sig string }
	var gots []got
	for _, r := range rec.reqs {
		gots = append(gots, got{r.Host, r.URL.Scheme + "://" + r.URL.Host + r.URL.EscapedPath(), r.Header.Get("x-xbl-contract-version"),
			r.Header.Get("Accept-Language"), r.Header.Get("Content-Type"), r.Header.Get("Signature")})
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "fgrl/"+Version) {
			t.Errorf("User-Agent %q", ua)
		}
	}
	json := "application/json; charset=utf-8"
	want := []got{
		{"profile.xboxlive.com", "https://profile.xboxlive.com/users/batch/profile/settings", "2", "fr-FR", json, "sig"},
		{"userpresence.xboxlive.com", "https://userpresence.xboxlive.com/users/xuid(" + me + ")", "3", "fr-FR", json, "sig"},
		{"social.xboxlive.com", "https://social.xboxlive.com/users/xuid(" + me + ")/people", "3", "fr-FR", json, "sig"},
		{"achievements.xboxlive.com", "http://127.0.0.1:9/prefix/users/xuid(" + me + ")/achievements", "2", "fr-FR", json, "sig"},
		{"sessiondirectory.xboxlive.com", "https://sessiondirectory.xboxlive.com/serviceconfigs/" + scid + "/sessiontemplates/t/sessions/n", "107", "fr-FR", json, "sig"},
		{"smartmatch.xboxlive.com", "https://smartmatch.xboxlive.com/serviceconfigs/" + scid + "/hoppers/h", "103", "fr-FR", json, "sig"},
		{"userstats.xboxlive.com", "https://userstats.xboxlive.com/users/xuid(" + me + ")/scids/" + scid + "/stats/a", "1", "fr-FR", json, "sig"},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

// answering counts the attempts that reach it, by method and host, and
// answers each with status.
type answering struct {
	status   int
	mu       sync.Mutex
	attempts map[string]int
}

func (a *answering) RoundTrip(r *http.Request) (*http.Response, error) {
	a.mu.Lock()
	if a.attempts == nil {
		a.attempts = map[string]int{}
	}
	a.attempts[r.Method+" "+r.Host]++
	a.mu.Unlock()
	if r.Body != nil {
		r.Body.Close()
	}
	rec := httptest.NewRecorder()
	rec.WriteHeader(a.status)
	return rec.Result(), nil
}

// callSendOnceAndRead makes every call XSAPI sends once, then one read.
func callSendOnceAndRead(u *User) {
	ctx := context.Background()
	ref := SessionRef{scid, "t", "n"}
	u.WriteSession(ctx, ref, map[string]any{})
	u.SendInvites(ctx, ref, []string{other})
	u.CreateMatchTicket(ctx, scid, "h", MatchTicketRequest{Session: ref, GiveUp: time.Minute})
	u.SubmitReputationFeedback(ctx, other, Feedback{Type: "CommsAbusiveVoice"})
	u.GetSession(ctx, ref)
}

// TestNonRetryable: calls XSAPI never retries are sent once even on a 503,
// while a read is retried.
func TestNonRetryable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &answering{status: 503}
		c := newClient(t, base, &transport.Transport{TitleID: title, DisableBudget: true})
		callSendOnceAndRead(c.As(me))
		attempts := base.attempts
		// The read is retried: at 0, [2,4), [6,12) s and, with short enough
		// jitter, once more; the window rule decides.
		if n := attempts["GET sessiondirectory.xboxlive.com"]; n < 3 || n > 4 {
			t.Errorf("GetSession made %d attempts, want 3 or 4", n)
		}
		delete(attempts, "GET sessiondirectory.xboxlive.com")
		want := map[string]int{
			"PUT sessiondirectory.xboxlive.com":  1,
			"POST sessiondirectory.xboxlive.com": 1,
			"POST smartmatch.xboxlive.com":       1,
			"POST reputation.xboxlive.com":       1,
		}
		if diff := cmp.Diff(want, attempts); diff != "" {
			t.Errorf("attempts of calls sent once mismatch (-want +got):\n%s", diff)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPaging(t *testing.T) {
	c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, DisableBudget: true})
	u := c.As(me)
	var ids []string
	for a, err := range u.AllAchievements(context.Background(), me, title, 2) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, ids); diff != "" {
		t.Errorf("achievement ids mismatch (-want +got):\n%s", diff)
	}
	rows := 0
	for r, err := range u.AllLeaderboard(context.Background(), scid, "stat(kills)", 100) {
		if err != nil {
			t.Fatal(err)
		}
		if rows++; r.Rank != rows {
			t.Fatalf("row %d has rank %d", rows, r.Rank)
		}
	}
	if rows != 250 {
		t.Errorf("%d leaderboard rows, want 250", rows)
	}
	// Stopping early fetches no more pages.
	for range u.AllLeaderboard(context.Background(), scid, "stat(kills)", 100) {
		break
	}
}

func TestStatefulCalls(t *testing.T) {
	c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, DisableBudget: true})
	u := c.As(me)
	ctx := context.Background()
	if err := u.SetPresence(ctx, true, &RichPresence{SCID: scid, ID: "inMatch", Params: []string{"dust"}}); err != nil {
		t.Fatal(err)
	}
	p, err := c.As(other).GetPresence(ctx, me)
	if err != nil || p.State != "Online" || p.Devices[0].Titles[0].Activity.RichPresence != "inMatch(dust)" {
		t.Errorf("presence after set: %+v, %v", p, err)
	}
	if changed, err := u.UpdateAchievement(ctx, scid, "3", 60); !changed || err != nil {
		t.Errorf("first update: %v, %v", changed, err)
	}
	if changed, err := u.UpdateAchievement(ctx, scid, "3", 50); changed || err != nil {
		t.Errorf("update backwards: %v, %v; want unchanged (304)", changed, err)
	}
	a, err := u.GetAchievement(ctx, me, scid, "3")
	if err != nil || a.Percent() != 60 || a.ProgressState != "InProgress" {
		t.Errorf("achievement after update: %+v, %v", a, err)
	}
	ref := SessionRef{scid, "quick", "lobby"}
	if _, created, err := u.WriteSession(ctx, ref, map[string]any{"properties": map[string]any{"custom": map[string]any{"map": "dust"}}}); !created || err != nil {
		t.Errorf("create session: %v, %v", created, err)
	}
	doc, err := u.GetSession(ctx, ref)
	var s struct {
		Properties struct {
			Custom map[string]string `json:"custom"`
		} `json:"properties"`
	}
	if err != nil || json.Unmarshal(doc, &s) != nil || s.Properties.Custom["map"] != "dust" {
		t.Errorf("get session: %s, %v", doc, err)
	}
	stats, err := u.GetStatsBatch(ctx, []string{me, other}, scid, []string{"kills", "deaths"})
	if err != nil || len(stats[other].Stats()) != 2 {
		t.Errorf("stats batch: %v, %v", stats, err)
	}
	perm, err := u.CheckPermission(ctx, "CommunicateUsingText", "0")
	if err != nil || perm.IsAllowed || perm.Reasons[0].Reason != "BlockListRestrictsTarget" {
		t.Errorf("permission: %+v, %v", perm, err)
	}
}

func TestErrorsHoldNoToken(t *testing.T) {
	const secret = "mock1.forged-token-secret"
	c, err := New(Config{TitleID: title, Tokens: StaticTokens{me: "XBL3.0 x=1;" + secret}, Transport: mock.NewHandler()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.As(me).GetProfiles(context.Background(), []string{me}, nil)
	if !errors.Is(err, hresult.HTTP_E_STATUS_DENIED) || strings.Contains(err.Error(), secret) {
		t.Errorf("error %q: want a 401 that does not repeat the token", err)
	}
}

// TestEveryCall4xx: every typed call against the mock with a token the mock
// refuses gives an *Error with the 401 HRESULT and the call's names.
func TestEveryCall4xx(t *testing.T) {
	forged := TokenFunc(func(_ context.Context, xuid string) (Token, error) {
		return Token{Authorization: "XBL3.0 x=1;forged"}, nil
	})
	c, err := New(Config{TitleID: title, Tokens: forged, Transport: &transport.Transport{Base: mock.NewHandler(), TitleID: title}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range calls {
		err := tc.do(context.Background(), c.As(me))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, hresult.HTTP_E_STATUS_DENIED) || e.StatusCode != 401 || e.API != tc.name || e.Service == "" {
			t.Errorf("%s: %v (%+v), want a 401 *Error naming the call", tc.name, err, e)
		}
	}
}

// BenchmarkGetProfiles is one typed call end to end against the in-process
// mock: building the request, the transport, the mock and decoding.
func BenchmarkGetProfiles(b *testing.B) {
	c, err := New(Config{TitleID: title, Tokens: mockTokens(),
		Transport: &transport.Transport{Base: mock.Must(mock.New(mock.Config{LegacyTitles: []string{title}})), TitleID: title, DisableBudget: true}})
	if err != nil {
		b.Fatal(err)
	}
	u := c.As(me)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := u.GetProfiles(ctx, []string{me}, []string{"Gamertag"}); err != nil {
			b.Fatal(err)
		}
	}
}

// stalledBody sends a few bytes of a 200 and stalls until the attempt ends.
type stalledBody struct {
	ctx  context.Context
	sent bool
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"profileUsers":[`), nil
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *stalledBody) Close() error { return nil }

// TestStalledAnswerEnds: a service that stalls in the middle of a 200 body
// cannot hold a typed call: the attempt timeout covers the whole answer.
func TestStalledAnswerEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: &stalledBody{ctx: r.Context()}, Request: r}, nil
		})
		c := newClient(t, base, &transport.Transport{TitleID: title, DisableBudget: true})
		start := time.Now()
		_, err := c.As(me).GetProfiles(context.Background(), []string{me}, nil)
		if err == nil || time.Since(start) > 20*time.Second {
			t.Errorf("GetProfiles = %v after %v, want an error within the 20 s attempt timeout", err, time.Since(start))
		}
		if !errors.Is(err, hresult.HTTP_E_STATUS_REQUEST_TIMEOUT) {
			t.Errorf("error %v, want HTTP_E_STATUS_REQUEST_TIMEOUT", err)
		}
	})
}

// TestSendOnceAfter401: calls XSAPI sends once are not refreshed and re-sent
// after a 401, while a read is (XSAPI XblHttpCall::HandleAuthError).
func TestSendOnceAfter401(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &answering{status: 401}
		refresh := func(*http.Request) (string, error) { return mock.Token(me, title), nil }
		c := newClient(t, base, &transport.Transport{TitleID: title, DisableBudget: true, RefreshToken: refresh})
		callSendOnceAndRead(c.As(me))
		attempts := base.attempts
		want := map[string]int{
			"PUT sessiondirectory.xboxlive.com":  1,
			"POST sessiondirectory.xboxlive.com": 1,
			"POST smartmatch.xboxlive.com":       1,
			"POST reputation.xboxlive.com":       1,
			"GET sessiondirectory.xboxlive.com":  2, // refreshed and retried once
		}
		if diff := cmp.Diff(want, attempts); diff != "" {
			t.Errorf("attempts after a 401 mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestHostileServerText: a 429's debugMessage and an error body's
// description reach the error escaped and clipped: 20,000 bytes with terminal
// escape codes make a short, printable error.
func TestHostileServerText(t *testing.T) {
	hostile := "\x1b[2J\x1b]0;pwned\x07" + strings.Repeat("x", 20000)
	for _, status := range []int{429, 400} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				rec := httptest.NewRecorder()
				rec.WriteHeader(status)
				b, _ := json.Marshal(map[string]any{"version": 1, "currentRequests": 11, "maxRequests": 10,
					"periodInSeconds": 15, "limitType": "Rate", "debugMessage": hostile, "description": hostile})
				rec.Write(b)
				return rec.Result(), nil
			})
			c := newClient(t, base, &transport.Transport{TitleID: title, DisableBudget: true, RetryWindow: -1})
			_, err := c.As(me).GetProfiles(context.Background(), []string{me}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); len(msg) > 600 || strings.ContainsAny(msg, "\x1b\x07") {
				t.Errorf("error of %d bytes %q: want it clipped and escaped", len(msg), msg[:min(len(msg), 120)])
			}
		})
	}
}

// TestAllPeople pages through a user's relationships with startIndex and
// maxItems, as the social service pages them.
func TestAllPeople(t *testing.T) {
	c := newClient(t, mock.NewHandler(), &transport.Transport{TitleID: title, DisableBudget: true})
	var got []string
	for p, err := range c.As(me).AllPeople(context.Background(), me, 5) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.XUID)
	}
	if len(got) != 12 || got[0] != "2533274791234568" || got[11] != "2533274791234579" {
		t.Errorf("AllPeople gave %d people %v, want the mock's 12 in order", len(got), got)
	}
	p, err := c.As(me).GetPeople(context.Background(), me, 5, "10")
	if err != nil || len(p.Items) != 2 || p.ContinuationToken != "" || p.TotalCount != 12 {
		t.Errorf("last page = %+v, %v; want 2 items and no next", p, err)
	}
}
