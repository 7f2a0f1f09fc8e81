package client

import (
	"context"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/limits"
)

func TestPath(t *testing.T) {
	tests := []struct {
		name string
		segs []string
		want reqPath
	}{
		{"xuid and a stat list stay literal", []string{"users", "xuid(1)", "stats", "a,b"},
			reqPath{"/users/xuid(1)/stats/a,b", "/users/xuid(1)/stats/a,b"}},
		{"title-managed leaderboard", []string{"leaderboards", "stat(kills)"},
			reqPath{"/leaderboards/stat(kills)", "/leaderboards/stat(kills)"}},
		{"escaped once", []string{"a b", "50%", "x/y", "é"},
			reqPath{"/a b/50%/x/y/é", "/a%20b/50%25/x%2Fy/%C3%A9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, path(tt.segs...)); diff != "" {
				t.Errorf("path(%q) mismatch (-want +got):\n%s", tt.segs, diff)
			}
		})
	}
}

func TestCheckArgs(t *testing.T) {
	a := api{service: "s", name: "N"}
	tests := []struct {
		name string
		err  error
	}{
		{"empty xuid", checkXUID(a, "xuid", "")},
		{"xuid with letters", checkXUID(a, "xuid", "12a")},
		{"xuid with a sign", checkXUID(a, "xuid", "-1")},
		{"xuid over uint64", checkXUID(a, "xuid", "18446744073709551616")},
		{"scid too short", func() error { _, err := normSCID(a, "scid", "7492baca"); return err }()},
		{"scid not hex", func() error { _, err := normSCID(a, "scid", "7492baca-c1b4-440d-a391-b7ef364a8dzz"); return err }()},
		{"scid without dashes", func() error { _, err := normSCID(a, "scid", "7492baca0c1b40440d0a3910b7ef364a8d40"); return err }()},
		{"people token not an index", func() error {
			_, err := (&User{}).GetPeople(context.Background(), "2533274791234567", 0, "abc")
			return err
		}()},
		{"people token negative", func() error {
			_, err := (&User{}).GetPeople(context.Background(), "2533274791234567", 0, "-5")
			return err
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errIs(tt.err, hresult.E_INVALIDARG) {
				t.Errorf("got %v, want E_INVALIDARG", tt.err)
			}
		})
	}
	if err := checkXUID(a, "xuid", "18446744073709551615"); err != nil {
		t.Errorf("max uint64: %v", err)
	}
	if s, err := normSCID(a, "scid", "7492BACA-C1B4-440D-A391-B7EF364A8D40"); err != nil || s != "7492baca-c1b4-440d-a391-b7ef364a8d40" {
		t.Errorf("normSCID = %q, %v; want it lower-cased", s, err)
	}
}

func errIs(err error, h hresult.HRESULT) bool {
	e, ok := err.(*Error)
	return ok && e.HRESULT() == h
}

// TestRulesExist: every typed call names a rule that both built-in limits
// tables have, so WithRule never silently falls back to path matching.
func TestRulesExist(t *testing.T) {
	apis := []api{statsAPI, leaderboardAPI, statLeaderboardAPI, achievementsAPI, presenceAPI, presenceWriteAPI,
		profileAPI, socialAPI, privacyAPI, mpsdAPI, smartmatchAPI, reputationAPI}
	for _, rev := range limits.Revisions() {
		l, err := limits.Revision(rev)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range apis {
			r, ok := l.ByScope(a.rule)
			if !ok || !r.CoversHost(a.host) {
				t.Errorf("%s: no rule %q for %s", rev, a.rule, a.host)
			}
		}
	}
}

func FuzzEscapeSegment(f *testing.F) {
	for _, s := range []string{"xuid(1)", "a,b", "stat(kills)", "a b/c%", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeSegment(s)
		got, err := url.PathUnescape(e)
		if err != nil || got != s {
			t.Fatalf("escapeSegment(%q) = %q, which unescapes to %q, %v", s, e, got, err)
		}
		for i := 0; i < len(e); i++ {
			if e[i] != '%' && !pchar(e[i]) {
				t.Fatalf("escapeSegment(%q) = %q leaves %q", s, e, e[i])
			}
		}
	})
}
