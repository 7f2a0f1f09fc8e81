package mock_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

func attack9fAdmin(api http.Handler, method, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(method, target, nil)
	r.Host, r.RemoteAddr = "127.0.0.1:8080", "127.0.0.1:50000"
	api.ServeHTTP(w, r)
	return w
}

func attack9fKeys(t *testing.T, api http.Handler) int {
	t.Helper()
	w := attack9fAdmin(api, "GET", "/_fgrl/api/keys")
	var keys []json.RawMessage
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &keys) != nil {
		t.Fatalf("GET keys: %d %.200s", w.Code, w.Body)
	}
	return len(keys)
}

// mock/admin doc: "DELETE /_fgrl/api/keys?user=U&title=T&scope=S  forget
// one key's counts"; "DELETE /_fgrl/api/keys  forget every key's counts".
// admin.go (the fourth wave's fix): "A query that does not parse is
// refused whole: url.Values drops a pair it cannot read without a word,
// and a filter or key dropped so would pick every call, or forget every
// key"; RELIABILITY.md: "`DELETE /_fgrl/api/keys` with every field dropped
// means all keys" was a break. A query that parses but whose names are
// not the API's (a capitalised or mistyped name: User, xuids) is dropped
// the same way, without a word: the DELETE that names one key forgets
// every key.
func TestAttack9fAdminMisnamedKeyForgetsEveryKey(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	for _, x := range []string{"2533274791234567", "2533274791234568"} {
		r := httptest.NewRequest("GET", "/users/xuid("+x+")/profile/settings?settings=Gamertag", nil)
		r.Host = "profile.xboxlive.com"
		r.Header.Set("Authorization", mock.Token(x, "1234567890"))
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	api := admin.Handler(h, admin.Config{})
	for _, q := range []string{
		"User=U&Title=1234567890&Scope=profile",
		"xuids=2533274791234567",
	} {
		n := attack9fKeys(t, api)
		if n == 0 {
			t.Fatal("no keys counted to forget")
		}
		w := attack9fAdmin(api, "DELETE", "/_fgrl/api/keys?"+q)
		if w.Code == http.StatusBadRequest {
			continue
		}
		if after := attack9fKeys(t, api); after == 0 {
			t.Errorf("DELETE /_fgrl/api/keys?%s: %d, and all %d keys are forgotten: the names it did not read were dropped without a word", q, w.Code, n)
			// count again for the next query
			for _, x := range []string{"2533274791234567", "2533274791234568"} {
				r := httptest.NewRequest("GET", "/users/xuid("+x+")/profile/settings?settings=Gamertag", nil)
				r.Host = "profile.xboxlive.com"
				r.Header.Set("Authorization", mock.Token(x, "1234567890"))
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		}
	}
}

// held: the fix refuses only a query url.ParseQuery cannot parse; mock/admin
// doc "GET /_fgrl/api/calls ... path (a prefix)", "GET /_fgrl/ the live
// page", page.html "new EventSource('events' + location.search); // ?token=".
// A legitimate client's queries still answer 200: a '+' (a space), an
// encoded ';' (%3B), an empty query, a bare '?', the page and its events'
// query with a token.
func TestAttack9fAdminHeldLegitimateQueriesPass(t *testing.T) {
	h := mock.Must(mock.New(mock.Config{}))
	api := admin.Handler(h, admin.Config{})
	for _, target := range []string{
		"/_fgrl/api/calls?path=/users/a+b",
		"/_fgrl/api/calls?path=/users/me%3Bv%3D2",
		"/_fgrl/api/calls?",
		"/_fgrl/api/calls.har?method=GET&host=profile.xboxlive.com",
		"/_fgrl/?token=abc",
		"/_fgrl/api/faults?token=a%2Bb",
		"/_fgrl/api/keys?user=u&title=1234567890&scope=profile",
	} {
		if w := attack9fAdmin(api, "GET", target); w.Code == http.StatusBadRequest {
			t.Errorf("GET %s: 400 %.200s", target, w.Body)
		}
	}
	for _, target := range []string{"/_fgrl/api/calls?path=/users/100%", "/_fgrl/api/keys?user=a;title=b"} {
		if w := attack9fAdmin(api, "DELETE", target); w.Code != http.StatusBadRequest {
			t.Errorf("DELETE %s: %d, want 400", target, w.Code)
		}
	}
}
