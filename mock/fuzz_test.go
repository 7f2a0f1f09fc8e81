package mock

import (
	"strings"
	"testing"
)

func FuzzParseToken(f *testing.F) {
	f.Add(Token(xuid1, title1))
	f.Add("XBL3.0 x=1;mock1.abc.def")
	f.Add("Bearer x")
	f.Fuzz(func(t *testing.T, h string) {
		id, err := parseToken(h)
		if err != nil {
			return
		}
		if id.xuid == "" || id.title == "" || len(id.xuid) > maxIDBytes || len(id.title) > maxIDBytes || UserHash(id.xuid) != id.userhash {
			t.Fatalf("parseToken(%q) = %+v", h, id)
		}
		if Token(id.xuid, id.title) != strings.TrimSpace(h) && !strings.EqualFold(h[:6], "XBL3.0") {
			t.Fatalf("accepted %q, which Token did not mint", h)
		}
	})
}
