package mock

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/internal/xblid"
)

// oracle is the regular expression a pattern stands for: the form the routes
// were written in before pattern, kept here as the reference.
func oracle(p string) *regexp.Regexp {
	r := strings.NewReplacer(
		"gt({})", `gt\(([^/]+)\)`,
		"{}", `([^/]+)`,
		"{user}", `(me|xuid\(\d{1,20}\))`,
		"xuid({n})", `xuid\((\d{1,20})\)`,
		"(", `\(`, ")", `\)`,
	)
	return regexp.MustCompile(`(?i)^` + r.Replace(p) + `$`)
}

// oracleMatch is the oracle's answer for pattern p, the regexp's
// submatches or nil, with a XUID that does not fit 64 bits refused
// (xblid.CheckXUID) where p captures a user or a XUID.
func oracleMatch(p string, re *regexp.Regexp, path string) []string {
	m := re.FindStringSubmatch(path)
	if m == nil {
		return nil
	}
	kinds := regexp.MustCompile(`gt\(\{\}\)|\{\}|\{user\}|xuid\(\{n\}\)`).FindAllString(p, -1)
	for i, c := range m[1:] {
		n := strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(c), "xuid("), ")")
		if kinds[i] != "{}" && kinds[i] != "gt({})" && n != "me" && xblid.CheckXUID(n) != nil {
			return nil
		}
	}
	return m
}

var patterns = []string{
	"/users/{user}/profile/settings",
	"/users/xuid({n})/achievements/{}/{}",
	"/serviceconfigs/{}/sessiontemplates/{}/sessions/{}",
	"/handles",
	"/users/xuid({n})/scids/{}/stats/{}",
	"/users/gt({})/profile/settings",
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
		{patterns[0], "/users/xuid(18446744073709551616)/profile/settings", nil},
		{patterns[5], "/users/GT(Major Nelson)/profile/settings", []string{"Major Nelson"}},
		{patterns[5], "/users/gt()/profile/settings", nil},
		{patterns[5], "/users/me/profile/settings", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := pat(tt.pattern).match(tt.path, nil)
			if !ok {
				got = nil
			} else if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("match (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatternMalformed(t *testing.T) {
	for _, p := range []string{"", "users", "/users//x", "/a/{x}", "/{}/{}/{}/{}/{}"} {
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
	for _, p := range []string{"/users/me/profile/settings", "/users/xuid(1)/achievements/a/b", "/handles", "/users/xUiD(00)/scids/x/stats/y,z", "/users/gt(a)/profile/settings"} {
		f.Add(p)
	}
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = oracle(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for i, p := range patterns {
			got, ok := pat(p).match(path, nil)
			m := oracleMatch(p, res[i], path)
			if ok != (m != nil) {
				t.Fatalf("%s on %q: match %v, regexp %v", p, path, ok, m != nil)
			}
			if ok && !cmp.Equal(got, m[1:], cmp.Comparer(func(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") })) {
				t.Fatalf("%s on %q: captures %q, regexp %q", p, path, got, m[1:])
			}
		}
	})
}
