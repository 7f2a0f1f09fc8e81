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
					ctx = WithPolicy(ctx, Policy{Rule: tt.rule})
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
		{"FailFast twice", WithPolicy(bg, Policy{FailFast: true}), WithPolicy(WithPolicy(bg, Policy{FailFast: true}), Policy{FailFast: true}), true},
		{"options in either order", WithPolicy(bg, Policy{NoRetry: true, Priority: Background}), WithPolicy(bg, Policy{Priority: Background, NoRetry: true}), true},
		{"waits capped alike", WithPolicy(bg, Policy{MaxWait: time.Hour}), WithPolicy(bg, Policy{MaxWait: MaxPolicyWait}), true},
		{"FailFast or not", WithPolicy(bg, Policy{FailFast: true}), bg, false},
		{"NoRetry or not", WithPolicy(bg, Policy{NoRetry: true}), bg, false},
		{"a long attempt timeout or not", WithPolicy(bg, Policy{AttemptTimeout: LongCallTimeout}), bg, false},
		{"Background or not", WithPolicy(bg, Policy{Priority: Background}), bg, false},
		{"BoundBody or not", WithPolicy(bg, Policy{BoundBody: true}), bg, false},
		{"other waits", WithPolicy(bg, Policy{MaxWait: time.Second}), WithPolicy(bg, Policy{MaxWait: 2 * time.Second}), false},
		{"other rules", WithPolicy(bg, Policy{Rule: "profile"}), WithPolicy(bg, Policy{Rule: "presence"}), false},
	}
	for _, tt := range tests {
		if got := PolicyOf(tt.a) == PolicyOf(tt.b); got != tt.same {
			t.Errorf("%s: PolicyOf(a) == PolicyOf(b) is %v, want %v", tt.name, got, tt.same)
		}
	}
}

// TestPolicyLayers: a call's policy is the Transport's with each field its
// context sets in its place, and WithPolicy adds to what the context
// already asks: layers of code (the caller, the typed client) each add
// what they know.
func TestPolicyLayers(t *testing.T) {
	tr := &Transport{Policy: Policy{MaxWait: time.Minute, Priority: Background, Rule: "profile"}}
	bg := context.Background()
	tests := []struct {
		name string
		ctx  context.Context
		want Policy
	}{
		{"the transport's", bg, Policy{MaxWait: time.Minute, Priority: Background, Rule: "profile"}},
		{"a field in its place", WithPolicy(bg, Policy{Priority: Interactive}), Policy{MaxWait: time.Minute, Priority: Interactive, Rule: "profile"}},
		{"layers add", WithPolicy(WithPolicy(bg, Policy{FailFast: true}), Policy{Rule: "presence", BoundBody: true}), Policy{MaxWait: time.Minute, FailFast: true, Priority: Background, Rule: "presence", BoundBody: true}},
		{"bounded", WithPolicy(bg, Policy{MaxWait: time.Hour, AttemptTimeout: time.Hour}), Policy{MaxWait: MaxPolicyWait, AttemptTimeout: LongCallTimeout, Priority: Background, Rule: "profile"}},
		{"a negative duration sets nothing", WithPolicy(bg, Policy{MaxWait: -time.Second, AttemptTimeout: -time.Second}), Policy{MaxWait: time.Minute, Priority: Background, Rule: "profile"}},
	}
	for _, tt := range tests {
		if got := tr.policyFor(tt.ctx); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
