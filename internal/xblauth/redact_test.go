package xblauth

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestSignInHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"login.live.com", true},
		{"LOGIN.live.com.", true},
		{"login.live.com:443", true},
		{"login.microsoftonline.com", true},
		{"user.auth.xboxlive.com", true},
		{"xsts.auth.xboxlive.com", true},
		{"device.auth.xboxlive.com", true},
		{"title.auth.xboxlive.com", true},
		{"sisu.xboxlive.com", true},
		{"auth.xboxlive.com", false},
		{"a.b.auth.xboxlive.com", false},
		{"profile.xboxlive.com", false},
		{"login.live.com.evil.example", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := SignInHost(tt.host); got != tt.want {
			t.Errorf("SignInHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

// redactParamsTests are RedactParams' cases; FuzzRedact starts from them.
var redactParamsTests = []struct {
	name, host, ref, want string
}{
	{"a service's query", "profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag", "/users/me/profile/settings?settings=Gamertag"},
	{"no query", "login.live.com", "/oauth20_token.srf", "/oauth20_token.srf"},
	{"a code at the desktop redirect", "login.live.com", "/oauth20_desktop.srf?code=M.C105_SECRET&lc=1033",
		"/oauth20_desktop.srf?code=REDACTED&lc=REDACTED"},
	{"an authorization request", "login.live.com",
		"/oauth20_authorize.srf?client_id=000000004C12AE6F&redirect_uri=https%3A%2F%2Flogin.live.com%2Foauth20_desktop.srf&response_type=code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL&state=ST",
		"/oauth20_authorize.srf?client_id=000000004C12AE6F&redirect_uri=https%3A%2F%2Flogin.live.com%2Foauth20_desktop.srf&response_type=code&scope=service%3A%3Auser.auth.xboxlive.com%3A%3AMBI_SSL&state=REDACTED"},
	{"tokens in the fragment", "login.live.com", "/oauth20_desktop.srf#access_token=SECRET&token_type=bearer&refresh_token=SECRET",
		"/oauth20_desktop.srf#access_token=REDACTED&token_type=bearer&refresh_token=REDACTED"},
	{"a query and a fragment", "https://login.live.com", "https://login.live.com/x?code=SECRET#access_token=SECRET",
		"https://login.live.com/x?code=REDACTED#access_token=REDACTED"},
	{"a sign-in query that is not a form", "login.live.com", "/x?eyJSECRET", "/x?REDACTED"},
	{"a sign-in name that is not one", "login.live.com", "/x?a=1&%3Cb%3E=SECRET", "/x?REDACTED"},
	{"a token to a service, split by ; and escaped", "profile.xboxlive.com", "/users/me?settings=G;ACCESS%5FTOKEN=SECRET&token=SECRET&code",
		"/users/me?settings=G;ACCESS%5FTOKEN=REDACTED&token=REDACTED&code"},
	{"a loopback redirect", "127.0.0.1:8080", "/auth/callback?code=SECRET&state=s", "/auth/callback?code=REDACTED&state=s"},
	{"already redacted", "login.live.com", "/x?code=REDACTED", "/x?code=REDACTED"},
	{"empty pairs", "login.live.com", "/x?&client_id=c&&code=SECRET&", "/x?&client_id=c&&code=REDACTED&"},
	{"named credentials to a service", "profile.xboxlive.com",
		"/users/me/profile/settings?settings=Gamertag&Authorization=XBL3.0%20x%3D1%3BSECRET&Signature=SECRET&RpsTicket=t%3DSECRET&UserToken=SECRET&xsts=SECRET&client_secret=SECRET",
		"/users/me/profile/settings?settings=Gamertag&Authorization=REDACTED&Signature=REDACTED&RpsTicket=REDACTED&UserToken=REDACTED&xsts=REDACTED&client_secret=REDACTED"},
	{"a service's page cursor and public names kept", "achievements.xboxlive.com",
		"/users/xuid(1)/achievements?maxItems=10&continuationToken=20&token_type=bearer&countryCode=US",
		"/users/xuid(1)/achievements?maxItems=10&continuationToken=20&token_type=bearer&countryCode=US"},
	// net/http reads "/p#?access_token=X" as path "/p#" and query
	// "access_token=X" (url.ParseRequestURI takes no fragment); a URL
	// parser reads "?access_token=X" as the fragment.
	{"a query after '#', as net/http reads it", "profile.xboxlive.com", "/users/me/profile/settings#?access_token=SECRET&settings=Gamertag",
		"/users/me/profile/settings#?access_token=REDACTED&settings=Gamertag"},
	{"a fragment's pair before the query", "profile.xboxlive.com", "/p#access_token=SECRET?settings=Gamertag",
		"/p#access_token=REDACTED?settings=Gamertag"},
	{"a pair after '#' in the query", "profile.xboxlive.com", "/p?settings=Gamertag#&access_token=SECRET",
		"/p?settings=Gamertag#&access_token=REDACTED"},
	{"a query's value running into '#'", "profile.xboxlive.com", "/p?access_token=SECRET#x", "/p?access_token=REDACTED#x"},
	{"a sign-in query after '#'", "login.live.com", "/oauth20_desktop.srf#x?code=SECRET", "/oauth20_desktop.srf#REDACTED?code=REDACTED"},
}

func TestRedactParams(t *testing.T) {
	for _, tt := range redactParamsTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RedactParams(tt.host, tt.ref); got != tt.want {
				t.Errorf("RedactParams(%q, %q)\n got %q\nwant %q", tt.host, tt.ref, got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://login.live.com/oauth20_desktop.srf?code=SECRET&state=s", "https://login.live.com/oauth20_desktop.srf?code=REDACTED&state=REDACTED"},
		{"https://profile.xboxlive.com/users/me?settings=Gamertag", "https://profile.xboxlive.com/users/me?settings=Gamertag"},
		{"https://profile.xboxlive.com/users/me", "https://profile.xboxlive.com/users/me"},
		{"%zz://login.live.com/?code=SECRET", "%zz://login.live.com/?REDACTED"},
		{"https://u:SECRET@profile.xboxlive.com/users/me", "https://profile.xboxlive.com/users/me"},
		{"https://SECRET@profile.xboxlive.com:443/users/me?settings=Gamertag#f", "https://profile.xboxlive.com:443/users/me?settings=Gamertag#f"},
		{"//u:SECRET@profile.xboxlive.com/users/me?access_token=SECRET", "//profile.xboxlive.com/users/me?access_token=REDACTED"},
		{"redis://:SECRET/x@127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://default:SECRET#x@127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"rediss://default:SECRET?x@127.0.0.1:6379/0", "rediss://127.0.0.1:6379/0"},
		{"https://profile.xboxlive.com/users/gt(a@b)/profile", "https://profile.xboxlive.com/users/gt(a@b)/profile"},
		{"https://profile.xboxlive.com/p?access_token=SECRET&settings=Gamertag", "https://profile.xboxlive.com/p?access_token=REDACTED&settings=Gamertag"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want || strings.Contains(got, "SECRET") {
			t.Errorf("RedactURL(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactParamsAllocs: a service's URL, the mock's every request, costs
// no allocation.
func TestRedactParamsAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		RedactParams("profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag,GameDisplayPicRaw")
	}); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

// FuzzRedact: what RedactBody, RedactParams and RedactURL keep of a
// sign-in host's text holds no value a sign-in service may have meant as a
// secret: a form keeps only public parameters' values, JSON only public
// fields' strings; at other hosts no parameter or field credentialName
// names keeps a value, at any depth, however the URL is read (as net/http
// reads a request target, or as a URL with a fragment); RedactURL keeps
// no user info; a second redaction changes nothing.
func FuzzRedact(f *testing.F) {
	for _, tt := range redactBodyTests {
		f.Add(tt.host, tt.body)
	}
	for _, tt := range redactParamsTests {
		f.Add(tt.host, tt.ref)
	}
	f.Add("profile.xboxlive.com", "https://u:pw@profile.xboxlive.com/p?access_token=x#?code=y")
	f.Add("", "redis://default:pw#x@127.0.0.1:6379/0")
	f.Fuzz(func(t *testing.T, host, text string) {
		signIn := SignInHost(host)
		body := RedactBody(host, []byte(text))
		if again := RedactBody(host, body); !bytes.Equal(again, body) {
			t.Fatalf("RedactBody(%q) = %q, then %q", text, body, again)
		}
		ref := RedactParams(host, text)
		if again := RedactParams(host, ref); again != ref {
			t.Fatalf("RedactParams(%q) = %q, then %q", text, ref, again)
		}
		checkParams(t, ref, signIn)
		u := RedactURL(text)
		if again := RedactURL(u); again != u {
			t.Fatalf("RedactURL(%q) = %q, then %q", text, u, again)
		}
		if pu, err := url.Parse(u); err == nil {
			if pu.User != nil {
				t.Fatalf("RedactURL(%q) = %q keeps user info", text, u)
			}
			checkParams(t, u, SignInHost(pu.Host))
		}
		b := bytes.TrimSpace(body)
		switch {
		case len(b) == 0:
		case b[0] == '{' || b[0] == '[':
			checkJSON(t, body, signIn)
		default:
			checkForm(t, string(body), signIn, bodySeparators)
		}
	})
}

// checkParams fails t if ref keeps a value RedactParams would not, read
// every way: as net/http reads a request target (the query after the
// first '?', its pairs split at '&'), and as RedactParams splits it.
func checkParams(t *testing.T, ref string, signIn bool) {
	t.Helper()
	i := strings.IndexAny(ref, "?#")
	if i < 0 {
		return
	}
	if q := strings.IndexByte(ref, '?'); q >= 0 && !signIn {
		for _, pair := range strings.Split(ref[q+1:], "&") {
			name, value, _ := strings.Cut(pair, "=")
			if n, err := url.QueryUnescape(name); err == nil && !strings.Contains(pair, ";") && credentialName(strings.ToLower(n)) && !redacted(value) {
				t.Fatalf("%q keeps the value of %q, as net/http reads it", ref, n)
			}
		}
	}
	frag, query, _ := strings.Cut(ref[i+1:], "?")
	if ref[i] == '?' {
		frag, query = "", ref[i+1:]
	}
	checkForm(t, frag, signIn, urlSeparators)
	checkForm(t, query, signIn, urlSeparators)
}

// redacted reports whether a kept value holds no secret: empty, or
// Redacted up to what a coarser reading of the text runs into it.
func redacted(v string) bool {
	rest, ok := strings.CutPrefix(v, Redacted)
	return v == "" || ok && (rest == "" || strings.ContainsRune("&;#?", rune(rest[0])))
}

// checkForm fails t if a form split at seps keeps a value RedactParams
// would not.
func checkForm(t *testing.T, form string, signIn bool, seps string) {
	t.Helper()
	if signIn && form == Redacted {
		return
	}
	for _, pair := range strings.FieldsFunc(form, func(r rune) bool { return strings.ContainsRune(seps, r) }) {
		name, value, _ := strings.Cut(pair, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		n = strings.ToLower(n)
		if value != Redacted && value != "" && (signIn && !publicName(n) || !signIn && credentialName(n)) {
			t.Fatalf("%q keeps the value of %q", form, name)
		}
	}
}

// checkJSON fails t if a redacted JSON document keeps a string that is not
// a public field's (at a sign-in host), or a string or number inside a
// credential's field (anywhere), read token by token with encoding/json
// rather than by the rewriter, up to where the document ends or breaks.
func checkJSON(t *testing.T, doc []byte, signIn bool) {
	t.Helper()
	if string(doc) == Redacted {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type level struct {
		object, name     bool // in an object, and its next token is a name
		public, whole    bool
		secret, inSecret bool // the field just named is a credential; the container is inside one
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		var top *level
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].name = true
			}
			continue
		}
		if top != nil && top.object && top.name {
			n := strings.ToLower(tok.(string))
			top.public, top.whole, top.secret, top.name = publicName(n), wholeName(n), top.inSecret || credentialName(n), false
			continue
		}
		whole := false // inside a wholeName field's object or array
		for _, l := range stack[:max(len(stack)-1, 0)] {
			whole = whole || l.whole
		}
		public := whole || top != nil && top.public
		secret := !whole && top != nil && (top.object && top.secret || !top.object && top.inSecret)
		if top != nil && top.object {
			top.name = true
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, level{object: d == '{', name: d == '{', public: d == '[' && public, inSecret: secret})
			continue
		}
		switch v := tok.(type) {
		case string:
			if v != Redacted && (secret || signIn && !public) {
				t.Fatalf("%q keeps %q", doc, v)
			}
		case json.Number:
			if secret {
				t.Fatalf("%q keeps the number %s in a credential's field", doc, v)
			}
		}
	}
}

func BenchmarkRedactParams(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		RedactParams("profile.xboxlive.com", "/users/me/profile/settings?settings=Gamertag,GameDisplayPicRaw")
		RedactParams("login.live.com", "/oauth20_desktop.srf?code=M.C105_SECRET&lc=1033")
	}
}
