package client

// The second attack's tests that held on the code they were written
// against: kept as tests of promises that did hold.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAttackRedirectToAnotherHostThroughFgrlTransport: "A redirect is followed
// only within its origin (scheme, host and port): one to another origin is
// the call's answer". Through fgrl's own transport (the default), a 302, a
// 307 and a 308 to another host reach it with no Authorization and no
// Signature.
func TestAttackRedirectToAnotherHostThroughFgrlTransport(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for k, v := range r.Header {
			if j := strings.Join(v, ","); strings.Contains(j, "SECRET-HOSTILE") {
				leaked = append(leaked, k+": "+j)
			}
		}
		fmt.Fprintf(w, `{"xuid":%q,"state":"Online"}`, other)
	}))
	t.Cleanup(evil.Close)
	for _, code := range []int{http.StatusTemporaryRedirect, http.StatusFound, http.StatusPermanentRedirect} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, evil.URL+r.URL.RequestURI(), code)
		}))
		t.Cleanup(srv.Close)
		c := hostileClient(t, srv, nil, "userpresence.xboxlive.com")
		p, err := c.As(me).GetPresence(clAtkCtx(t), other)
		if err == nil {
			t.Errorf("%d to another host: GetPresence returned %+v from it with no error", code, p)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET-HOSTILE") {
			t.Errorf("%d: the error holds a credential: %v", code, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("another host received the caller's credentials: %q", leaked)
	}
}

// TestAttackBatchWindowNeverCrossesActingUsers: with Config.BatchWindow, two
// acting users looking one user up in one window must each get the answer
// made with their own token ("one GetProfiles for every GetProfile with the
// same settings the acting user makes within the window"): a batch never
// merges lookups of different acting users.
func TestAttackBatchWindowNeverCrossesActingUsers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		actor := strings.TrimPrefix(r.Header.Get("Authorization"), "XBL3.0 x=")
		actor, _, _ = strings.Cut(actor, ";")
		if r.Method == "POST" { // a batch: answer each user asked for
			var b strings.Builder
			b.WriteString("[")
			for i, x := range []string{clAtkThird, "2533274700000002"} {
				if i > 0 {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, `{"xuid":%q,"state":"Online","devices":[{"type":%q,"titles":[]}]}`, x, actor)
			}
			b.WriteString("]")
			fmt.Fprint(w, b.String())
			return
		}
		fmt.Fprintf(w, `{"xuid":%q,"state":"Online","devices":[{"type":%q,"titles":[]}]}`, clAtkThird, actor)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{TitleID: title, Transport: plainTransport(t), BatchWindow: 40 * time.Millisecond,
		Endpoints: map[string]string{"userpresence.xboxlive.com": srv.URL},
		Tokens: TokenFunc(func(_ context.Context, xuid string) (Token, error) {
			return Token{Authorization: "XBL3.0 x=" + xuid + ";T"}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := clAtkCtx(t)
	var wg sync.WaitGroup
	for _, actor := range []string{me, other, me, other} {
		for _, x := range []string{clAtkThird, "2533274700000002"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := c.As(actor).GetPresence(ctx, x)
				if err != nil {
					if x == clAtkThird {
						t.Errorf("GetPresence(%s) as %s: %v", x, actor, err)
					}
					return
				}
				if len(p.Devices) != 1 || p.Devices[0].Type != actor {
					t.Errorf("GetPresence(%s) as %s returned an answer made for %+v", x, actor, p.Devices)
				}
			}()
		}
	}
	wg.Wait()
}

// TestAttackErrorBodyEchoesTokenInEveryField: a 403 whose JSON body echoes the
// caller's token and signature in description, message and code, and a
// text body of the token alone: "the request's own token and signature
// taken out of the service's text".
func TestAttackErrorBodyEchoesTokenInEveryField(t *testing.T) {
	for _, body := range []string{
		fmt.Sprintf(`{"description":"bad %s / %s"}`, hostileToken, hostileSig),
		fmt.Sprintf(`{"message":"bad %s"}`, strings.ToUpper(hostileToken)),
		fmt.Sprintf(`{"code":%q}`, hostileSig),
		hostileToken + "\r\n" + hostileSig,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		c := hostileClient(t, srv, plainTransport(t), "social.xboxlive.com")
		_, err := c.As(me).GetPeople(clAtkCtx(t), other, 0, "")
		if err == nil {
			t.Fatalf("a 403 was no error")
		}
		if s := strings.ToUpper(err.Error()); strings.Contains(s, "SECRET-HOSTILE") {
			t.Errorf("body %.40q: the error holds a credential: %v", body, err)
		}
	}
}
