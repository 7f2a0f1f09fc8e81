package transport

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// TestKeyOf: KeyOf names the key RoundTrip counts a request against: the
// token's userhash, the TitleID and the scope of the rule the policy names
// or the request matches; a host without a rule is no budget's.
func TestKeyOf(t *testing.T) {
	tr := &Transport{TitleID: title}
	uhs := mock.UserHash(xuid1)
	for _, tc := range []struct {
		name, method, url string
		token             bool
		policy            Policy
		want              throttle.Key
		wantOK            bool
	}{
		{"a profile read", "GET", profileURL, true, Policy{}, throttle.Key{User: uhs, Title: title, Scope: "profile"}, true},
		{"a presence write", "POST", "https://userpresence.xboxlive.com/users/xuid(1)/devices/current/titles/current", true, Policy{},
			throttle.Key{User: uhs, Title: title, Scope: "presence/write"}, true},
		{"the rule the policy names", "POST", "https://sessiondirectory.xboxlive.com/handles", true, Policy{Rule: "mpsd-search-handle/write"},
			throttle.Key{User: uhs, Title: title, Scope: "mpsd-search-handle/write"}, true},
		{"no token", "GET", profileURL, false, Policy{}, throttle.Key{Title: title, Scope: "profile"}, true},
		{"a host without a rule", "GET", "https://Example.com/x", true, Policy{}, throttle.Key{User: uhs, Title: title, Scope: "host:example.com"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(WithPolicy(context.Background(), tc.policy), tc.method, tc.url, nil)
			if tc.token {
				req.Header.Set("Authorization", mock.Token(xuid1, title))
			}
			got, ok := tr.KeyOf(req)
			if diff := cmp.Diff(tc.want, got); diff != "" || ok != tc.wantOK {
				t.Errorf("KeyOf mismatch (-want +got):\n%s\nok %v, want %v", diff, ok, tc.wantOK)
			}
		})
	}
}

// TestKeyOfIsTheKeyCounted: after a call, the key KeyOf names holds it in
// the budget (Snapshot), and another user's key does not.
func TestKeyOfIsTheKeyCounted(t *testing.T) {
	tr := &Transport{Base: mock.NewHandler(), TitleID: title}
	resp, err := get(t, tr, context.Background(), profileURL, xuid1)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	k, _ := tr.KeyOf(resp.Request)
	for _, tc := range []struct {
		key  throttle.Key
		want int
	}{{k, 1}, {throttle.Key{User: mock.UserHash(xuid2), Scope: k.Scope}, 0}} {
		s, err := tr.Snapshot(tc.key)
		if err != nil || s.Burst.Count != tc.want {
			t.Errorf("Snapshot(%v): burst count %d, %v; want %d", tc.key, s.Burst.Count, err, tc.want)
		}
	}
	if k.User != mock.UserHash(xuid1) {
		t.Errorf("KeyOf's user %q, want the token's userhash", k.User)
	}
}
