package xblauth

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// parseTests are Parse's cases; FuzzParse starts from them.
var parseTests = []struct {
	in        string
	uhs, tok  string
	wantError error
}{
	{"XBL3.0 x=123;eyJ0", "123", "eyJ0", nil},
	{"xbl3.0 x=abc;t;with;semis", "abc", "t;with;semis", nil},
	{"  XBL3.0  x=1;t ", "1", "t", nil},
	{"", "", "", ErrMissing},
	{"Bearer x", "", "", ErrMalformed},
	{"XBL3.0 y=1;t", "", "", ErrMalformed},
	{"XBL3.0 x=;t", "", "", ErrMalformed},
	{"XBL3.0 x=1;", "", "", ErrMalformed},
	{"XBL3.0 x=1", "", "", ErrMalformed},
	{"XBL3.0", "", "", ErrMalformed},
	{"XBL3.0 x=" + strings.Repeat("a", MaxHeader) + ";t", "", "", ErrTooLarge},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(fmt.Sprintf("%.30q", tt.in), func(t *testing.T) {
			uhs, tok, err := Parse(tt.in)
			if !errors.Is(err, tt.wantError) || uhs != tt.uhs || tok != tt.tok {
				t.Errorf("Parse(%.30q) = %q, %q, %v; want %q, %q, %v", tt.in, uhs, tok, err, tt.uhs, tt.tok, tt.wantError)
			}
		})
	}
}

func TestServiceHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"profile.xboxlive.com", true},
		{"PROFILE.XboxLive.com.", true},
		{"profile.xboxlive.com:443", true},
		{"xboxlive.com", true},
		{"a.b.xboxlive.com", true},
		{"xboxlive.com.evil.example", false},
		{"evilxboxlive.com", false},
		{".xboxlive.com", false},
		{"profile..xboxlive.com", false},
		{"xboxlive.com.", true},
		{"127.0.0.1:8080", false},
		{"", false},
		{"profile.xboxlive.co", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := ServiceHost(tt.host); got != tt.want {
				t.Errorf("ServiceHost(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

// redactTests are Redact's cases; FuzzParse starts from them too.
var redactTests = []struct{ in, want string }{
	{"XBL3.0 x=123;secret", "XBL3.0 x=123;REDACTED"},
	{"XBL3.0 x=1674471606081042789;secret", "XBL3.0 x=1674471606081042789;REDACTED"}, // a recorded userhash (UserHash)
	{"XBL3.0 x=12345678901234567890;secret", "XBL3.0 x=12345678901234567890;REDACTED"},
	{"Bearer secret", "REDACTED"},
	{"", ""},
	// What precedes the ';' is kept only if it is a userhash: a token sent
	// in its place is not.
	{"XBL3.0 x=eyJ-token-secret;x", "REDACTED"},
	{"XBL3.0 x=123456789012345678901;secret", "REDACTED"},
	{"XBL3.0 x=12a;secret", "REDACTED"},
	{"XBL3.0 x=\x1b[2J;secret", "REDACTED"},
}

func TestRedact(t *testing.T) {
	for _, tt := range redactTests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, tt := range redactTests {
		f.Add(tt.in)
	}
	for _, s := range []string{ // white space where split reads no further and Parse trims
		"XBL3.0 x=123;tok \t", "XBL3.0 x=123; \u00a0", "XBL3.0 x=123;\u0085", " \u2003XBL3.0 x=1;t\u2003",
		"XBL3.0 ", "XBL3.0\u00a0x=1;t", "xbl3.0  x=1;;", "XBL3.0 x=1;\xff ", "\t",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		uhs, tok, err := Parse(h)
		if wuhs, wtok, werr := parseBefore(h); uhs != wuhs || tok != wtok || err != werr {
			t.Fatalf("Parse(%q) = %q, %q, %v; before: %q, %q, %v", h, uhs, tok, err, wuhs, wtok, werr)
		}
		if got := UserHashOf(h); got != uhs {
			t.Fatalf("UserHashOf(%q) = %q, Parse's userhash %q", h, got, uhs)
		}
		if r := Redact(h); r != "" && r != Redacted {
			uhs, tok, ok := strings.Cut(strings.TrimPrefix(r, "XBL3.0 x="), ";")
			if !ok || !UserHash(uhs) || tok != Redacted || !strings.HasPrefix(r, "XBL3.0 x=") {
				t.Fatalf("Redact(%q) = %q: keeps more than a userhash", h, r)
			}
		}
		if err != nil {
			if uhs != "" || tok != "" {
				t.Fatalf("Parse(%q) returned values with an error", h)
			}
			return
		}
		if uhs == "" || tok == "" || strings.Contains(Redact(h), tok) && !strings.Contains("XBL3.0 x="+uhs+";REDACTED", tok) {
			t.Fatalf("Parse(%q) = %q, %q; Redact leaks the token: %q", h, uhs, tok, Redact(h))
		}
	})
}

func BenchmarkParse(b *testing.B) {
	h := "XBL3.0 x=12345678901234567890;" + strings.Repeat("eyJhbGciOiJSUzI1NiJ9", 60)
	b.ReportAllocs()
	for b.Loop() {
		Parse(h)
	}
}

func TestSensitive(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"Authorization", true}, {"signature", true}, {"Cookie", true}, {"Proxy-Authorization", true},
		{"X-Api-Key", true}, {"X-Auth-Token", true}, {"Set-Cookie", true},
		{"Accept", false}, {"x-xbl-contract-version", false}, {"Content-Type", false}, {"User-Agent", false},
	} {
		if got := Sensitive(tt.name); got != tt.want {
			t.Errorf("Sensitive(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// parseBefore is Parse as it was at 9264bfd, before split: the whole
// value trimmed first, then read. FuzzParse holds Parse, which trims the
// token's end after reading, and UserHashOf, which does not trim it, to
// it.
func parseBefore(h string) (userhash, token string, err error) {
	switch {
	case h == "":
		return "", "", ErrMissing
	case len(h) > MaxHeader:
		return "", "", ErrTooLarge
	}
	if h = strings.TrimSpace(h); h == "" {
		return "", "", ErrMalformed
	}
	return split(h)
}
