package xblauth

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzScrub: whatever the posted body and the headers, Scrub leaves none
// of the secrets they hold in the text (but a secret made of "[redacted]"'s
// own brackets, which the replacement could form anew), scrubbing twice
// changes nothing more, and no secret is shorter than minSecret.
func FuzzScrub(f *testing.F) {
	f.Add([]byte(`{"Properties":{"RpsTicket":"d=SECRET-ACCESS-TOKEN-0123"},"RelyingParty":"http://auth.xboxlive.com"}`),
		"XBL3.0 x=1;SECRET-TOKEN-abcdef", "sig", "ticket SECRET-ACCESS-TOKEN-0123 for http://auth.xboxlive.com")
	f.Add([]byte(`{"UserTokens":["aaaaaaaaaaaaaaaa","aaaaaaaab"]}`), "", "", "aaaaaaaaaaaaaaaaab aaaaaaaab")
	f.Fuzz(func(t *testing.T, body []byte, auth, sig, text string) {
		h := http.Header{}
		h.Set("Authorization", auth)
		h.Set("Signature", sig)
		ss := Secrets{}.PostedSecrets(body).HeaderSecrets(h)
		out := ss.Scrub(text)
		for _, x := range ss {
			if len(x) < minSecret {
				t.Fatalf("a secret of %d bytes: %q", len(x), x)
			}
			if !strings.ContainsAny(x, "[]") && strings.Contains(asciiLower(out), asciiLower(x)) {
				t.Fatalf("Scrub(%q) = %q still holds %q", text, out, x)
			}
		}
		if again := ss.Scrub(out); again != out && !secretsWithBrackets(ss) {
			t.Fatalf("scrubbing twice changed %q to %q", out, again)
		}
	})
}

func secretsWithBrackets(ss Secrets) bool {
	for _, x := range ss {
		if strings.ContainsAny(x, "[]") {
			return true
		}
	}
	return false
}

// TestPostedSecrets: the strings under credential fields, at any depth,
// a ticket's token alone, and the forms a URL and a JSON encoder escape
// each to (Add); not the public fields a refusal names.
func TestPostedSecrets(t *testing.T) {
	body := `{"RelyingParty":"http://auth.xboxlive.com","TokenType":"JWT","Properties":{"AuthMethod":"RPS",` +
		`"SiteName":"user.auth.xboxlive.com","RpsTicket":"d=ACCESS-0123456789","UserTokens":["USER-TOKEN-0123"],"SandboxId":"RETAIL"}}`
	got := Secrets{}.PostedSecrets([]byte(body))
	want := map[string]bool{"d=ACCESS-0123456789": true, "d%3DACCESS-0123456789": true, `d\u003dACCESS\u002d0123456789`: true,
		"ACCESS-0123456789": true, `ACCESS\u002d0123456789`: true, "USER-TOKEN-0123": true, `USER\u002dTOKEN\u002d0123`: true}
	if len(got) != len(want) {
		t.Errorf("PostedSecrets = %q, want %d secrets", got, len(want))
	}
	for _, x := range got {
		if !want[x] {
			t.Errorf("PostedSecrets took %q", x)
		}
	}
}

// TestAddEscapedForms: a secret is taken out as given, URL-escaped and
// JSON-escaped (a server that echoes it through encoding/json writes <, >
// and & as \u003c, \u003e, \u0026), the forms xblcall check's and proxy
// --status's errors met, and with every character but letters and digits
// escaped, in either case of hex digits.
func TestAddEscapedForms(t *testing.T) {
	const secret = "s3cret<&>TOKEN+/="
	ss := Secrets{}.Add(secret)
	for _, echoed := range []string{secret, "s3cret%3C%26%3ETOKEN%2B%2F%3D", `s3cret\u003c\u0026\u003eTOKEN+/=`,
		`s3cret\u003C\u0026\u003ETOKEN\u002B\u002F\u003D`, `s3cret\u003c\u0026\u003etoken\u002b\u002f\u003d`} {
		if got := ss.Scrub("auth: " + echoed + "."); got != "auth: [redacted]." {
			t.Errorf("Scrub(%q) = %q", echoed, got)
		}
	}
}

// TestScrubCut: a text scrubbed, then cut; a secret that runs across the
// cut is replaced whole, and a cut text ends before any first part of a
// secret, whether the text given ends there or more than n and Longest
// bytes of it would have to be read to find it whole.
func TestScrubCut(t *testing.T) {
	const tok = "LONGSECRETTOKEN0123456789" // letters and digits: one form
	for _, tt := range []struct {
		secret, in string
		n          int
		want       string
		wantCut    bool
	}{
		{"SECRET-0123", "abc", 10, "abc", false},
		{"SECRET-0123", "abcSECRET-0123", 14, "abc[redacted]", false},
		{"SECRET-0123", "abcSECRET-0123xyz", 5, "abc[r", true},       // across the cut: replaced, then cut
		{"SECRET-0123", "abcdefghiSEC", 10, "abcdefghi", true},       // "S" cut back
		{"SECRET-0123", "a secret-0123 b", 12, "a [redacted]", true}, // any case
		{tok, "x" + tok + tok + "yz" + tok, 20, "x[redacted]", true}, // the second read in part only: cut back
	} {
		got, cut := Secrets{}.Add(tt.secret).ScrubCut(tt.in, tt.n)
		if got != tt.want || cut != tt.wantCut {
			t.Errorf("ScrubCut(%q, %d) = %q, %v; want %q, %v", tt.in, tt.n, got, cut, tt.want, tt.wantCut)
		}
	}
}

// TestLowered: Scrub finds with the lowered secrets what it finds with
// them, and lowers none of them again.
func TestLowered(t *testing.T) {
	ss := Secrets{}.Add("Secret+Token/0123=")
	low := ss.Lowered()
	const in = "a SECRET+TOKEN/0123= b secret%2Btoken%2F0123%3D c"
	if got, want := low.Scrub(in), ss.Scrub(in); got != want {
		t.Errorf("Lowered().Scrub(%q) = %q, want %q", in, got, want)
	}
	clean := "no secret here at all"
	if n := testing.AllocsPerRun(100, func() { _ = low.Scrub(clean) }); n != 0 {
		t.Errorf("Lowered().Scrub of a clean text: %v allocations, want 0", n)
	}
}
