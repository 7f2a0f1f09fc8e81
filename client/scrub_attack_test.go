package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/xblgo/fgrl/transport"
)

// atkReqErr is a Base's error that keeps the request it failed to send,
// with a clean text.
type atkReqErr struct {
	Req *http.Request
	Err error
}

func (e *atkReqErr) Error() string { return "send failed: " + e.Err.Error() }
func (e *atkReqErr) Unwrap() error { return e.Err }

// TestScrubClientErrorLeaks: a typed call whose Base fails with an
// error that keeps the request, or quotes its token split across a
// wrapper and its cause: the *client.Error returned must tell neither
// the token nor the signature, by text, fmt verbs, Unwrap, or errors.As.
func TestScrubClientErrorLeaks(t *testing.T) {
	for _, mode := range []string{"request in error", "split quote"} {
		var mu sync.Mutex
		var sentAuth string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			auth := r.Header.Get("Authorization")
			mu.Lock()
			sentAuth = auth
			mu.Unlock()
			_, tok, _ := strings.Cut(auth, ";")
			if mode == "split quote" && len(tok) > 8 {
				return nil, fmt.Errorf("proxy refused token %s%w", tok[:4], errors.New(tok[4:]+": forbidden"))
			}
			return nil, &atkReqErr{Req: r, Err: errors.New("connection reset by peer")}
		})
		c := newClient(t, base, &transport.Transport{TitleID: title, DisableBudget: true, RetryWindow: -1})
		_, err := c.As(me).GetProfiles(context.Background(), []string{me}, nil)
		if err == nil {
			t.Fatalf("%s: no error", mode)
		}
		mu.Lock()
		_, tok, _ := strings.Cut(sentAuth, ";")
		mu.Unlock()
		if len(tok) < 12 {
			t.Fatalf("%s: no token was sent (Authorization %q)", mode, sentAuth)
		}
		var re *atkReqErr
		if errors.As(err, &re) && re.Req != nil && strings.Contains(re.Req.Header.Get("Authorization"), tok) {
			t.Errorf("%s: errors.As(*atkReqErr) gives the request with its token", mode)
		}
		for e, depth := err, 0; e != nil && depth < 40; depth++ {
			for _, v := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
				if s := fmt.Sprintf(v, e); strings.Contains(s, tok[4:]) {
					t.Errorf("%s: level %d %s tells the token: %q", mode, depth, v, s)
				}
			}
			e = errors.Unwrap(e)
		}
	}
}
