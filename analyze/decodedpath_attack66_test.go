package analyze_test

import (
	"cmp"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/limits"
)

// attack66Tricky are URLs whose path decodes into something other than written.
var attack66Tricky = []struct{ method, url string }{
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)%2Fstate"},
	{"POST", "https://userpresence.xboxlive.com/users%2Fxuid(2533274791234567)%2Fstate"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/state%00"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/stat%2565"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/state%3Fx=1"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/state%23frag"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/state%2F"},
	{"POST", "https://userpresence.xboxlive.com/users/xuid(2533274791234567)/state%20"},
	{"POST", "https://userpresence.xboxlive.com/users/me/%2e%2e/me/state"},
	{"POST", "https://userpresence.xboxlive.com/%2F/users/me/state"},
	{"POST", "https://userpresence.xboxlive.com:/users/me/state"},
	{"POST", "https://USERPRESENCE.XBOXLIVE.COM:443/users/me/state"},
	{"POST", "https://userpresence.xboxlive.com./users/me/state"},
	{"POST", "https://u:p@userpresence.xboxlive.com/users/me/state"},
	{"POST", "https://userpresence.xboxlive.com/users/me/stat%C3%A9"},
	{"POST", "https://userpresence.xboxlive.com/users/me/state;v=1"},
	{"POST", "https://userpresence.xboxlive.com/users/me/STATE"},
	{"GET", "https://profile.xboxlive.com/users/xuid(1)%2Fprofile%2Fsettings"},
	{"POST", "https://profile.xboxlive.com/users/batch%2Fprofile%2Fsettings"},
	{"GET", "https://social.xboxlive.com/users/xuid(1)/people%2Fxuid(2)"},
	{"GET", "https://userpresence.xboxlive.com/users/xuid(1)%3F/state"},
}

// held: "a call's path is judged percent-decoded, as the transport and the
// mock match limits (net/url's Path)" (analyze, f714e17): for each URL
// net/url parses, the scope analyze.Analyzer.Judged returns is the scope
// of the rule limits.Default().Match finds for the request
// http.NewRequest makes of it (its Host and URL.Path, as
// transport.Transport matches: cmp.Or(req.Host, req.URL.Host)).
func TestAttack66JudgedMatchesTransport(t *testing.T) {
	a, err := analyze.New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lim := limits.Default()
	for _, tc := range attack66Tricky {
		req, err := http.NewRequest(tc.method, tc.url, nil)
		if err != nil {
			t.Logf("%s: net/url refuses (%v): the what-if fails it", tc.url, err)
			continue
		}
		c := analyze.Call{Method: tc.method, URL: tc.url, Authorization: "XBL3.0 x=7;R", Status: 200}
		scope, _, ok := a.Judged(&c)
		var want string
		if r, ok := lim.Match(tc.method, cmp.Or(req.Host, req.URL.Host), req.URL.Path); ok {
			want = r.Scope()
		}
		t.Logf("%s: path %q judged %q (%v), transport %q", tc.url, req.URL.Path, scope, ok, want)
		if want != "" && scope != want {
			t.Errorf("%s: judged %q, the transport paces it as %q", tc.url, scope, want)
		}
		if want == "" && ok && scope != "" {
			// judged under a host fallback: the transport keeps no budget
			t.Logf("%s: judged %q, no transport rule", tc.url, scope)
		}
	}
}
