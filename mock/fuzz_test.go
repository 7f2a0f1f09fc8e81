package mock

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func FuzzParseToken(f *testing.F) {
	f.Add(Token(xuid1, title1))
	f.Add("XBL3.0 x=1;mock1.abc.def")
	f.Add("Bearer x")
	f.Add(" " + Token(xuid2, title1) + " ")
	f.Add(signInToken(xuid1, title1, 7, time.Unix(1796342400, 0), "http://xboxlive.com"))
	f.Add(signInToken(xuid1, title1, 9, time.Unix(1796342400, 0), MockServiceRelyingParty))
	f.Add(signInToken(xuid1, title1, 10, time.Unix(1796342400, 0), "http://licensing.xboxlive.com"))
	f.Add(mintToken(xuid1, title1, "7.-5"))
	f.Add(signInToken(xuid1, title1, 8, time.Time{}, "http://xboxlive.com"))
	f.Add(mintToken(xuid1, title1, "7.x"))
	tc := newTokenCache(1) // one set: every token meets the entries of the inputs before it
	f.Fuzz(func(t *testing.T, h string) {
		id, err := parseToken(h)
		for range 2 { // the first read may make an entry, the second finds it
			if gotID, gotErr := tc.identity(h); gotID != id || (gotErr == nil) != (err == nil) {
				t.Fatalf("tokenCache.identity(%q) = %+v, %v; parseToken: %+v, %v", h, gotID, gotErr, id, err)
			}
		}
		if err != nil {
			return
		}
		if Token(id.xuid, id.title) == strings.TrimSpace(h) && id.expires != neverExpires {
			t.Fatalf("parseToken(%q) = %+v: a token Token minted expires", h, id)
		}
		if id.xuid == "" || id.title == "" || len(id.xuid) > maxIDBytes || len(id.title) > maxIDBytes || UserHash(id.xuid) != id.userhash {
			t.Fatalf("parseToken(%q) = %+v", h, id)
		}
		// net/http trims a header's value; parseToken does too, so the
		// scheme is read after the spaces around it.
		if trimmed := strings.TrimSpace(h); Token(id.xuid, id.title) != trimmed && !strings.EqualFold(trimmed[:6], "XBL3.0") {
			t.Fatalf("accepted %q, which Token did not mint", h)
		}
	})
}

// FuzzQueryValue: queryValue reads a query as url.ParseQuery does.
func FuzzQueryValue(f *testing.F) {
	for _, s := range []string{"settings=Gamertag", "a=1&a=2", "a;b=1&a=2", "a=%zz&a=3", "%61=1", "a=1+2", "&&a=&", "a"} {
		f.Add(s, "a")
	}
	f.Fuzz(func(t *testing.T, raw, key string) {
		want, _ := url.ParseQuery(raw)
		if got := queryValue(raw, key); got != want.Get(key) {
			t.Errorf("queryValue(%q, %q) = %q, want %q", raw, key, got, want.Get(key))
		}
	})
}
