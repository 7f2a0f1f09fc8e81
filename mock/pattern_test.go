package mock

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/internal/xblid"
)

// oracle is the regular expression a pattern stands for: the form the routes
// were written in before pattern, kept here as the reference. A XUID is 1 to
// 20 digits here; oracleMatch also checks that it fits 64 bits.
func oracle(p string) *regexp.Regexp {
	r := strings.NewReplacer(
		"{}", `([^/]+)`,
		"{user}", `(me|xuid\(\d{1,20}\))`,
		"xuid({n})", `xuid\((\d{1,20})\)`,
		"(", `\(`, ")", `\)`,
	)
	return regexp.MustCompile(`(?i)^` + r.Replace(p) + `$`)
}

// oracleMatch is the oracle's answer: the captures, or nil. A path with a
// "." or ".." segment is no path the services serve (HTTP servers resolve
// dot segments first), so it matches nothing.
func oracleMatch(re *regexp.Regexp, path string) []string {
	m := re.FindStringSubmatch(path)
	if m == nil || slices.Contains(strings.Split(path, "/"), ".") || slices.Contains(strings.Split(path, "/"), "..") {
		return nil
	}
	for _, c := range m[1:] {
		n := strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(c), "xuid("), ")")
		if n != "me" && strings.Trim(n, "0123456789") == "" && xblid.CheckXUID(n) != nil {
			return nil // a XUID past 64 bits
		}
	}
	return m[1:]
}

// matchOne matches path against one pattern through a router, as the
// Handler does: the captures, or nil when it does not match.
func matchOne(p, path string) []string {
	routes, got := newRouter([]route{{http.MethodGet, pat(p), nil}}).match(path, nil)
	if routes == nil {
		return nil
	}
	if got == nil {
		got = []string{}
	}
	return got
}

var patterns = []string{
	"/users/{user}/profile/settings",
	"/users/xuid({n})/achievements/{}/{}",
	"/serviceconfigs/{}/sessiontemplates/{}/sessions/{}",
	"/handles",
	"/users/xuid({n})/scids/{}/stats/{}",
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          []string // nil: no match
	}{
		{patterns[0], "/users/me/profile/settings", []string{"me"}},
		{patterns[0], "/USERS/XUID(2533274790000001)/Profile/Settings", []string{"XUID(2533274790000001)"}},
		{patterns[0], "/users/xuid()/profile/settings", nil},
		{patterns[0], "/users/xuid(123456789012345678901)/profile/settings", nil},
		{patterns[0], "/users/xuid(12a)/profile/settings", nil},
		{patterns[0], "/users/you/profile/settings", nil},
		{patterns[0], "/users/me/profile/settings/", nil},
		{patterns[0], "/users/me/profile", nil},
		{patterns[0], "users/me/profile/settings", nil},
		{patterns[1], "/users/xuid(42)/achievements/scid/7", []string{"42", "scid", "7"}},
		{patterns[1], "/users/xuid(42)/achievements//7", nil},
		{patterns[1], "/users/me/achievements/scid/7", nil},
		{patterns[2], "/serviceconfigs/a/sessiontemplates/b/sessions/c", []string{"a", "b", "c"}},
		{patterns[3], "/HANDLES", []string{}},
		{patterns[3], "/handles/query", nil},
		{patterns[3], "", nil},
		{patterns[3], "/handles/../handles", nil}, // ServeMux would clean it: 404, as before
		{patterns[0], "/users/xuid(18446744073709551616)/profile/settings", nil},
		{patterns[0], "/USERS/\u0130/profile/settings", nil}, // not ASCII: lower-casing must not move bytes
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got := matchOne(tt.pattern, tt.path)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("match (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatternMalformed(t *testing.T) {
	for _, p := range []string{"", "users", "/users//x", "/a/{x}", "/{}/{}/{}/{}/{}", "/a}"} {
		t.Run(p, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("pat(%q) did not panic", p)
				}
			}()
			pat(p)
		})
	}
}

// FuzzPatternMatch checks pattern against its regular expression.
func FuzzPatternMatch(f *testing.F) {
	for _, p := range []string{"/users/me/profile/settings", "/users/xuid(1)/achievements/a/b", "/handles", "/users/xUiD(00)/scids/x/stats/y,z", "/serviceconfigs/./sessiontemplates/b/sessions/c"} {
		f.Add(p)
	}
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = oracle(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for i, p := range patterns {
			got, want := matchOne(p, path), oracleMatch(res[i], path)
			if (got == nil) != (want == nil) {
				t.Fatalf("%s on %q: match %q, regexp %q", p, path, got, want)
			}
			if got != nil && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("%s on %q: captures %q, regexp %q", p, path, got, want)
			}
		}
	})
}
