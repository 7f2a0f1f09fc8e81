package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// TestAttack46CoalTypedReadsNeverCrossCallers: package client's typed calls ride
// on the fgrl transport; with its CoalesceReads and ReadCacheTTL, "identical
// GETs with the same token share one request" (README) and never across
// credentials: "compared as a SHA-256 digest: never across users, nor
// across two tokens of one user" (Transport.CoalesceReads), nor across
// Accept-Language or Signature.
//
// held: acting users with another token, the same userhash with another
// token, another Signature, and a client of another Accept-Language, all
// reading one profile at once through one shared Transport and then again
// from its cache, each got the answer made for its own request; identical
// callers shared one.
func TestAttack46CoalTypedReadsNeverCrossCallers(t *testing.T) {
	const target = "2533274790000001"
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		time.Sleep(200 * time.Millisecond)
		seen := fmt.Sprintf("%s|%s|%s", r.Header.Get("Authorization"), r.Header.Get("Signature"), r.Header.Get("Accept-Language"))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"profileUsers": []any{map[string]any{
			"id": target, "settings": []any{map[string]string{"id": "Gamertag", "value": seen}}}}})
	}))
	defer srv.Close()
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	tr := &transport.Transport{TitleID: title, Base: base, CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true}
	tokA := mock.Token("2533274791111111", title)
	uhsA := strings.TrimPrefix(strings.SplitN(tokA, ";", 2)[0], "XBL3.0 x=")
	toks := map[string]Token{
		"2533274791111111": {Authorization: tokA},
		"2533274792222222": {Authorization: mock.Token("2533274792222222", title)},
		"2533274793333333": {Authorization: "XBL3.0 x=" + uhsA + ";another-token-of-A"},
		"2533274794444444": {Authorization: tokA, Signature: "AAAAAQsig-one"},
		"2533274795555555": {Authorization: tokA, Signature: "AAAAAQsig-two"},
	}
	newClient := func(lang string) *Client {
		c, err := New(Config{TitleID: title, Transport: tr, AcceptLanguage: lang,
			Endpoints: map[string]string{"profile.xboxlive.com": srv.URL},
			Tokens: TokenFunc(func(_ context.Context, x string) (Token, error) {
				tok, ok := toks[x]
				if !ok {
					return Token{}, ErrNoToken
				}
				return tok, nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clients := map[string]*Client{"en-US": newClient("en-US"), "fr-FR": newClient("fr-FR")}
	type caller struct{ lang, xuid string }
	var callers []caller
	for lang := range clients {
		for x := range toks {
			callers = append(callers, caller{lang, x}, caller{lang, x}) // each twice: identical ones may share
		}
	}
	want := func(c caller) string {
		return fmt.Sprintf("%s|%s|%s", toks[c.xuid].Authorization, toks[c.xuid].Signature, c.lang)
	}
	for round, name := range []string{"at once", "from the cache"} {
		var wg sync.WaitGroup
		for _, c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := clients[c.lang].As(c.xuid).GetProfile(context.Background(), target, []string{"Gamertag"})
				if err != nil {
					t.Errorf("%s: %s as %s: %v", name, c.lang, c.xuid, err)
					return
				}
				if got := p.Settings["Gamertag"]; got != want(c) {
					t.Errorf("%s: %s as %s got the answer to %q; want its own %q", name, c.lang, c.xuid, got, want(c))
				}
			}()
		}
		wg.Wait()
		if round == 0 {
			if got := n.Load(); got != 10 {
				t.Logf("%d requests for %d callers (10 distinct reads)", got, len(callers))
			}
		}
	}
	if got := n.Load(); got > 10 {
		t.Logf("%d requests in all for 10 distinct reads made twice each, twice", got)
	}
}
