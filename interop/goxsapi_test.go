package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xsapi "github.com/df-mc/go-xsapi/v2"
	"github.com/df-mc/go-xsapi/v2/rta"
	"github.com/df-mc/go-xsapi/v2/social"
	"github.com/df-mc/go-xsapi/v2/xal"
	"github.com/df-mc/go-xsapi/v2/xal/sisu"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

// The accounts of the test's world: the user who signs in with go-xsapi,
// and two others who add them as a friend.
const (
	subscriber = "2533274790000001"
	friend     = "2533274790000002"
	another    = "2533274790000003"
)

// app is a title's SISU configuration as go-xsapi's own example gives it
// (example_test.go, Minecraft for Android): the mock knows the client ID
// as a published app.
var app = sisu.Config{
	Config: xal.Config{
		Device:    xal.Device{Type: xal.DeviceTypeAndroid, Version: "13"},
		UserAgent: "XAL Android 2025.04.20250326.000",
		TitleID:   1739947436,
		Sandbox:   "RETAIL",
	},
	ClientID:    "0000000048183522",
	RedirectURI: "ms-xal-0000000048183522://auth",
}

// TestGoXSAPIFollowsFriendsOverRTA drives the published Go client
// github.com/df-mc/go-xsapi/v2, unmodified, through its own public
// methods against the mock over HTTPS at the services' real names, as a
// user of it runs it: the device code sign-in at login.live.com (the test
// approves the code at the verification page, as the user's browser
// would), a SISU session as the token source (device token, SISU
// authorize, NSAL), ClientConfig.New with its eager RTA connection, and
// then:
//   - social's Subscribe: another user adds the subscriber as a friend
//     (the mock's admin API), and go-xsapi's handler gets Added;
//   - the connection dropped (an rta reset fault): go-xsapi redials and
//     resubscribes (a new MPSD connection id), and still gets the next
//     friend's Added;
//   - a subscribe refused 1001 Throttled (an rta fault) reaches the caller
//     as rta.StatusThrottled, and succeeds once the fault ends;
//   - the connection dropped while 1001 refuses subscribes: go-xsapi
//     reports the friends subscription lost, and a new Subscribe follows
//     them again (Removed);
//   - Close unsubscribes and closes the websocket; no goroutine is left
//     (TestMain).
func TestGoXSAPIFollowsFriendsOverRTA(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{World: world()}))
	h.SetAccount(mock.Account{XUID: subscriber, Gamertag: "Subscriber"})
	srv := mock.NewTLSServer(h)
	t.Cleanup(srv.Close)
	adm := httptest.NewServer(admin.Handler(h, admin.Config{}))
	t.Cleanup(adm.Close)
	hc := srv.Client()
	t.Cleanup(hc.CloseIdleConnections)
	logs := newLogSink(t)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ctx = context.WithValue(ctx, xal.HTTPClient, hc) // go-xsapi's way to give its sign-in an HTTP client

	client := signIn(ctx, t, hc, logs)
	if got := client.UserInfo().XUID; got != subscriber {
		t.Fatalf("signed in as %s, want %s", got, subscriber)
	}
	if client.RTA() == nil || h.RTAConns() != 1 {
		t.Fatalf("after ClientConfig.New: RTA %v, the mock holds %d RTA connections; want the eager connection, 1", client.RTA(), h.RTAConns())
	}

	friends := newFriendEvents()
	if err := client.Social().Subscribe(ctx, friends); err != nil {
		t.Fatalf("social Subscribe: %v", err)
	}
	conns := newConnIDs()
	sessions := rta.NewSubscription("https://sessiondirectory.xboxlive.com/connections/", conns)
	if err := client.RTA().Subscribe(ctx, sessions); err != nil {
		t.Fatalf("subscribe to MPSD's connections: %v", err)
	}
	first := receive(ctx, t, conns.ids, "the MPSD connection id")

	adminCall(ctx, t, adm.URL, http.MethodPut, "world", world(friend))
	if diff := cmp.Diff(notification{social.NotificationTypeAdded, []string{friend}}, receive(ctx, t, friends.notes, "Added")); diff != "" {
		t.Errorf("the friend's add, as go-xsapi's handler got it (-want +got):\n%s", diff)
	}

	adminCall(ctx, t, adm.URL, http.MethodPut, "faults", mock.Faults{Services: []mock.ServiceFault{{Service: mock.RTAService, Reset: true}}})
	adminCall(ctx, t, adm.URL, http.MethodDelete, "faults", nil)
	if got := receive(ctx, t, logs.resubscribed, "go-xsapi's resubscribe"); got != [2]int64{2, 2} {
		t.Fatalf("resubscribed %d of %d subscriptions, want 2 of 2", got[0], got[1])
	}
	if second := receive(ctx, t, conns.ids, "the new MPSD connection id"); second == first {
		t.Errorf("after the reconnect the connection id is still %s, want a new connection's", first)
	}
	adminCall(ctx, t, adm.URL, http.MethodPut, "world", world(friend, another))
	if diff := cmp.Diff(notification{social.NotificationTypeAdded, []string{another}}, receive(ctx, t, friends.notes, "Added after the reconnect")); diff != "" {
		t.Errorf("the next friend's add, after the reconnect (-want +got):\n%s", diff)
	}

	adminCall(ctx, t, adm.URL, http.MethodPut, "faults", mock.Faults{Services: []mock.ServiceFault{{Service: mock.RTAService, Status: rta.StatusThrottled}}})
	presence := rta.NewSubscription("https://userpresence.xboxlive.com/users/xuid("+subscriber+")/devices", nil)
	var refused *rta.UnexpectedStatusError
	if err := client.RTA().Subscribe(ctx, presence); !errors.As(err, &refused) || refused.Code != rta.StatusThrottled {
		t.Errorf("subscribe under a 1001 fault: %v, want rta.StatusThrottled", err)
	}
	adminCall(ctx, t, adm.URL, http.MethodDelete, "faults", nil)
	if err := client.RTA().Subscribe(ctx, presence); err != nil || !presence.Active() {
		t.Errorf("subscribe once the fault ended: %v (active %v), want it active", err, presence.Active())
	}

	for _, sub := range []*rta.Subscription{sessions, presence} {
		if err := client.RTA().Unsubscribe(ctx, sub); err != nil {
			t.Errorf("unsubscribe %s: %v", sub.ResourceURI(), err)
		}
	}

	select {
	case <-friends.lost:
		t.Fatal("go-xsapi reported the friends subscription lost before any refusal")
	default:
	}
	// The connection dropped while 1001 answers every subscribe: go-xsapi
	// redials, its resubscribe is refused, and it reports the friends
	// subscription lost (XSAPI would retry after min(attempt², 60) s); a
	// Subscribe once the fault ends follows the friends again.
	adminCall(ctx, t, adm.URL, http.MethodPut, "faults", mock.Faults{Services: []mock.ServiceFault{{Service: mock.RTAService, Reset: true, Status: rta.StatusThrottled}}})
	if got := receive(ctx, t, logs.resubscribed, "go-xsapi's refused resubscribe"); got != [2]int64{0, 1} {
		t.Fatalf("resubscribed %d of %d subscriptions under a 1001 fault, want 0 of 1", got[0], got[1])
	}
	receive(ctx, t, friends.lost, "HandleSubscriptionLost")
	adminCall(ctx, t, adm.URL, http.MethodDelete, "faults", nil)
	if err := client.Social().Subscribe(ctx, friends); err != nil {
		t.Fatalf("social Subscribe again: %v", err)
	}
	adminCall(ctx, t, adm.URL, http.MethodPut, "world", world(another))
	if diff := cmp.Diff(notification{social.NotificationTypeRemoved, []string{friend}}, receive(ctx, t, friends.notes, "Removed")); diff != "" {
		t.Errorf("the friend's removal, after subscribing again (-want +got):\n%s", diff)
	}

	if err := client.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for h.RTAConns() != 0 { // the mock sees the websocket close
		select {
		case <-ctx.Done():
			t.Fatalf("after Close the mock still holds %d RTA connections", h.RTAConns())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// signIn signs in as go-xsapi's example does: its device code flow at
// login.live.com, approved at the verification page, then a SISU session
// and ClientConfig.New, which connects to RTA at once.
func signIn(ctx context.Context, t *testing.T, hc *http.Client, logs *logSink) *xsapi.Client {
	t.Helper()
	da, err := app.DeviceAuth(ctx)
	if err != nil {
		t.Fatalf("DeviceAuth: %v", err)
	}
	approve(ctx, t, hc, da.UserCode)
	token, err := app.DeviceAccessToken(ctx, da)
	if err != nil {
		t.Fatalf("DeviceAccessToken: %v", err)
	}
	session := app.New(app.TokenSource(ctx, token), &sisu.SessionConfig{HTTPClient: hc})
	client, err := xsapi.ClientConfig{HTTPClient: hc, Logger: slog.New(logs)}.New(ctx, session)
	if err != nil {
		t.Fatalf("ClientConfig.New: %v", err)
	}
	return client
}

// approve is the user typing the code at the verification page, as a
// browser posts it (login.live.com's oauth20_remoteconnect.srf, where
// microsoft.com/link sends the user).
func approve(ctx context.Context, t *testing.T, hc *http.Client, code string) {
	t.Helper()
	form := url.Values{"otc": {code}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://login.live.com/oauth20_remoteconnect.srf", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("the verification page: %v", err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the verification page answered %d: %s", resp.StatusCode, b)
	}
}

// world is the test's world: the subscriber and their friends, each
// friendship listed on both accounts (the mock lists an account's people
// from its own lists only); device codes wait for the user at the
// verification page.
func world(friends ...string) mock.World {
	w := mock.World{DeviceCodes: "page", Accounts: []mock.WorldAccount{{XUID: subscriber, Gamertag: "Subscriber", Friends: friends}}}
	for _, x := range []string{friend, another} {
		a := mock.WorldAccount{XUID: x}
		if slices.Contains(friends, x) {
			a.Friends = []string{subscriber}
		}
		w.Accounts = append(w.Accounts, a)
	}
	return w
}

// adminCall calls the mock's admin API (method, /_fgrl/api/path, body as
// JSON) and fails the test unless it succeeds.
func adminCall(ctx context.Context, t *testing.T, base, method, path string, body any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, base+admin.Prefix+"api/"+path, r)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
}

// receive returns the next value of ch, or fails the test when ctx ends
// first.
func receive[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
		panic("unreachable")
	}
}

// notification is what go-xsapi's social handler is told.
type notification struct {
	Type  string
	XUIDs []string
}

// friendEvents is a social.SubscriptionHandler that passes on what it is
// told.
type friendEvents struct {
	notes chan notification
	lost  chan struct{}
}

func newFriendEvents() *friendEvents {
	return &friendEvents{notes: make(chan notification, 16), lost: make(chan struct{}, 16)}
}

func (f *friendEvents) HandleSocialNotification(typ string, xuids []string) {
	f.notes <- notification{typ, xuids}
}

func (f *friendEvents) HandleIncomingFriendRequestCountChange(int) {}

func (f *friendEvents) HandleSubscriptionLost() { f.lost <- struct{}{} }

// connIDs is an rta.SubscriptionHandler of MPSD's connections resource: it
// passes on the connection id each subscribe answers, read as go-xsapi's
// mpsd reads it (mpsd/subscription.go: a UUID, not the nil one).
type connIDs struct {
	rta.NopSubscriptionHandler
	ids chan uuid.UUID
}

func newConnIDs() *connIDs { return &connIDs{ids: make(chan uuid.UUID, 16)} }

func (c *connIDs) HandleSubscribe(custom json.RawMessage) error {
	var data struct {
		ConnectionID uuid.UUID `json:"ConnectionId"`
	}
	if err := json.Unmarshal(custom, &data); err != nil || data.ConnectionID == uuid.Nil {
		return fmt.Errorf("no ConnectionId in %s", custom)
	}
	c.ids <- data.ConnectionID
	return nil
}

// resubscribedMessage is what go-xsapi v2.0.3 logs when it has
// resubscribed after a reconnect (rta/reconnect.go), with the counts
// success and total: the one sign a caller has that it is done.
const resubscribedMessage = "resubscribed existing subscriptions"

// logSink takes go-xsapi's log: it keeps the text for a failed test's
// output, and passes on each resubscribe's counts.
type logSink struct {
	mu           *sync.Mutex
	buf          *bytes.Buffer
	text         slog.Handler
	resubscribed chan [2]int64
}

func newLogSink(t *testing.T) *logSink {
	s := &logSink{mu: &sync.Mutex{}, buf: &bytes.Buffer{}, resubscribed: make(chan [2]int64, 16)}
	s.text = slog.NewTextHandler(s.buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	t.Cleanup(func() {
		if t.Failed() {
			s.mu.Lock()
			t.Logf("go-xsapi's log:\n%s", s.buf)
			s.mu.Unlock()
		}
	})
	return s
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }

func (s *logSink) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == resubscribedMessage {
		var n [2]int64
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "success":
				n[0] = a.Value.Int64()
			case "total":
				n[1] = a.Value.Int64()
			}
			return true
		})
		s.resubscribed <- n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.Handle(ctx, r)
}

func (s *logSink) WithAttrs(as []slog.Attr) slog.Handler {
	c := *s
	c.text = s.text.WithAttrs(as)
	return &c
}

func (s *logSink) WithGroup(name string) slog.Handler {
	c := *s
	c.text = s.text.WithGroup(name)
	return &c
}
