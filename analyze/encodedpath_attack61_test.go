package analyze_test

import (
	"testing"

	"github.com/xblgo/fgrl/analyze"
)

// A path written percent-encoded is judged as the service routes it, and as
// the transport and the mock match limits (net/url's decoded Path): a
// presence write is presence/write however its path is spelt (the what-if
// once paced these calls as writes and reported them as reads:
// whatif.TestAttack61ClassByEncodedPath). A path that does not decode is
// judged as written.
func TestAttack61EncodedPathJudgedDecoded(t *testing.T) {
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/users/xuid(2533274791234567)/state", "presence/write"},
		{"/users/xuid%282533274791234567%29/state", "presence/write"},
		{"/users/xuid(2533274791234567)/stat%65", "presence/write"},
		{"/users/xuid(2533274791234567)/state%zz", "presence/read"},
	} {
		c := analyze.Call{Method: "POST", URL: "https://userpresence.xboxlive.com" + tc.path, Authorization: "XBL3.0 x=7;R", Status: 200}
		scope, _, ok := a.Judged(&c)
		if !ok || scope != tc.want {
			t.Errorf("%s: judged %q (%v); want %q", tc.path, scope, ok, tc.want)
		}
	}
}
