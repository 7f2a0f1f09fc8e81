package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// TestWithRule: a request that names its rule counts against it, where path
// matching would pick another. Creating search handles (1 per 15 s) and
// sending invites (30 per 15 s) are both POST /handles.
func TestWithRule(t *testing.T) {
	tests := []struct {
		name     string
		rule     string
		wantSent int // of 3 calls in one burst window
	}{
		{"path matching: mpsd", "", 3},
		{"named search-handle write", "mpsd-search-handle/write", 1},
		{"unknown name falls back to the path", "no-such-rule", 3},
		{"rule of another host falls back to the path", "profile", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &script{}
				tr := &Transport{Base: base, TitleID: title, RetryWindow: -1}
				ctx := context.Background()
				if tt.rule != "" {
					ctx = WithRule(ctx, tt.rule)
				}
				for range 3 {
					req, _ := http.NewRequestWithContext(ctx, "POST", "https://sessiondirectory.xboxlive.com/handles", strings.NewReader(`{}`))
					req.Header.Set("Authorization", mock.Token(xuid1, title))
					resp, err := tr.RoundTrip(req)
					var te *ThrottleError
					switch {
					case err == nil:
						resp.Body.Close()
					case !errors.As(err, &te) || !te.Local:
						t.Fatalf("call: %v", err)
					}
				}
				if got := base.calls(); got != tt.wantSent {
					t.Errorf("sent %d of 3, want %d", got, tt.wantSent)
				}
			})
		})
	}
}

// otherKey is a context key of another package's.
type otherKey struct{}

// TestPolicyOf: contexts that ask the same of their call carry equal
// Policies, and contexts that ask anything different do not, so that code
// merging calls (the client's batches) can tell them apart.
func TestPolicyOf(t *testing.T) {
	bg := context.Background()
	tests := []struct {
		name string
		a, b context.Context
		same bool
	}{
		{"none", bg, context.WithValue(bg, otherKey{}, 1), true},
		{"FailFast twice", FailFast(bg), FailFast(FailFast(bg)), true},
		{"options in either order", Background(NoRetry(bg)), NoRetry(Background(bg)), true},
		{"waits capped alike", WithMaxWait(bg, time.Hour), WithMaxWait(bg, MaxPolicyWait), true},
		{"FailFast or not", FailFast(bg), bg, false},
		{"NoRetry or not", NoRetry(bg), bg, false},
		{"LongCall or not", LongCall(bg), bg, false},
		{"Background or not", Background(bg), bg, false},
		{"BoundBody or not", BoundBody(bg), bg, false},
		{"other waits", WithMaxWait(bg, time.Second), WithMaxWait(bg, 2*time.Second), false},
		{"other rules", WithRule(bg, "profile"), WithRule(bg, "presence"), false},
	}
	for _, tt := range tests {
		if got := PolicyOf(tt.a) == PolicyOf(tt.b); got != tt.same {
			t.Errorf("%s: PolicyOf(a) == PolicyOf(b) is %v, want %v", tt.name, got, tt.same)
		}
	}
}
