package client

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/gob"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
)

// Attacks on "Printing a token shows who it is for, never the token"
// (client/tokenfmt.go) beyond the verbs TestTokensPrintRedacted tries.

const (
	attack107Tok = "eyJhbGciOiJSUzI1NiJ9.ATKTOKENSECRET.0123456789"
	attack107Sig = "AAAAAQHATKSIGNATURESECRET0123456789"
	attack107Dlg = "ATKDELEGATIONSECRET0123456789"
)

func attack107Key(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return key, new(big.Int).SetBytes(raw).String()
}

// attack107Leaks names the secrets of secrets found in out (by name only: the
// secret itself is never printed).
func attack107Leaks(out string, secrets map[string]string) []string {
	var found []string
	for name, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			found = append(found, name)
		}
	}
	return found
}

// held: every fmt verb with flags, width and precision (%w and %p of a
// value aside: TestAttack107TokenErroringVerbs), bad verbs (%z, %!), a bad
// index and a bad width, of a
// Token and an XboxToken by value, by pointer, a nil pointer, in a slice of
// pointers, a map keyed and valued by them, an array, a struct embedding
// each (exported and pointer), an interface slice, fmt.Errorf %w/%v and
// errors.Join around them, text/template's {{.}}, {{printf "%#v" .}} and
// {{js .}}/{{html .}}, and Sprint/Sprintln/Fprint.
func TestAttack107TokensEveryFmtShape(t *testing.T) {
	key, d := attack107Key(t)
	tk := Token{Authorization: "XBL3.0 x=123;" + attack107Tok, Signature: attack107Sig, Key: key}
	xt := XboxToken{UserHash: "123", XUID: "2533274790000000", Gamertag: "G", Token: attack107Tok, DelegationToken: attack107Dlg, NotAfter: time.Unix(2e9, 0)}
	type embT struct {
		Token
		N int
	}
	type embX struct {
		*XboxToken
		N int
	}
	type field struct {
		A Token
		B *XboxToken
	}
	var nilTok *Token
	var nilX *XboxToken
	values := []any{
		tk, &tk, xt, &xt, nilTok, nilX,
		[]*Token{&tk, nil}, []*XboxToken{&xt},
		map[Token]XboxToken{tk: xt}, map[string]*Token{"k": &tk},
		[2]XboxToken{xt, xt}, embT{tk, 1}, embX{&xt, 1}, &embT{tk, 2}, field{tk, &xt},
		[]any{tk, xt, &tk},
		fmt.Errorf("wrapped: %w", fmt.Errorf("%v %+v", tk, xt)),
		errors.Join(fmt.Errorf("a %v", &tk), fmt.Errorf("b %#v", &xt)),
	}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "% x", "%#x", "%+q", "%#q",
		"%10.3v", "%-80s", "%.5s", "%08d", "%e", "%g", "%t", "%U", "%c", "%b", "%o", "%O", "%!", "%z", "%[2]v", "%*v"}
	secrets := map[string]string{"token": attack107Tok, "signature": attack107Sig, "delegation token": attack107Dlg, "private key D": d}
	tmpl := template.Must(template.New("t").Parse(`{{.}} {{printf "%#v" .}} {{printf "%+v" .}} {{js .}} {{html .}} {{urlquery .}} {{print .}}`))
	for i, v := range values {
		var outs []string
		for _, verb := range verbs {
			outs = append(outs, fmt.Sprintf(verb, v))
		}
		outs = append(outs, fmt.Sprint(v), fmt.Sprintln(v, v))
		var b bytes.Buffer
		fmt.Fprint(&b, v)
		_ = tmpl.Execute(&b, v) // a nil pointer may stop the template: what it printed is checked
		outs = append(outs, b.String())
		for _, o := range outs {
			if l := attack107Leaks(o, secrets); len(l) > 0 {
				t.Errorf("client/tokenfmt.go: \"Printing a token shows who it is for, never the token: Token and XboxToken format (fmt, every verb)\" — value %d (%T) printed its %v (%d bytes of output)", i, v, l, len(o))
			}
		}
	}
}

// held: fmt's %w and %p given a Token or an XboxToken value (with a format
// not constant, which vet cannot see) are fmt's report of a wrong verb
// ("%!w(client.Token=...)"), printed by reflection without Format, as
// tokenfmt.go says; the right verbs for them (%v in fmt.Errorf, %p of a
// pointer) print no secret.
func TestAttack107TokenErroringVerbs(t *testing.T) {
	attack107DocSays(t, "tokenfmt.go", `What calls none of these methods sees the fields as they are: fmt's report of a wrong verb ("%!w(client.Token=...)" for %w of a value that is no error, %p of one that is no pointer; go vet flags both)`)
	key, d := attack107Key(t)
	tk := Token{Authorization: "XBL3.0 x=123;" + attack107Tok, Signature: attack107Sig, Key: key}
	xt := XboxToken{UserHash: "123", Token: attack107Tok, DelegationToken: attack107Dlg, NotAfter: time.Unix(2e9, 0)}
	secrets := map[string]string{"token": attack107Tok, "signature": attack107Sig, "delegation token": attack107Dlg, "private key D": d}
	format := "signing in: %w" // a variable, as a wrapper's format often is
	for _, v := range []any{tk, xt, &xt} {
		if out := fmt.Errorf(format, v).Error(); !strings.HasPrefix(out, "signing in: %!w(") {
			t.Errorf("fmt.Errorf(%q, %T) is not fmt's report of a wrong verb (%d bytes)", format, v, len(out))
		}
		out := fmt.Errorf("signing in: %v", v).Error()
		if leak := attack107Leaks(out, secrets); len(leak) > 0 {
			t.Errorf("client/tokenfmt.go: \"Token and XboxToken format (fmt, every verb)\" — fmt.Errorf(\"signing in: %%v\", %T) printed its %v", v, leak)
		}
	}
	for _, v := range []any{&tk, &xt} {
		out := fmt.Sprintf("token at %p", v)
		if !strings.HasPrefix(out, "token at 0x") || len(attack107Leaks(out, secrets)) > 0 {
			t.Errorf("fmt.Sprintf(\"token at %%p\", %T) printed more than an address (%d bytes)", v, len(out))
		}
	}
}

// attack107DocSays fails t unless the comments of file (in this package) say
// phrase, comment markers and line breaks aside.
func attack107DocSays(t *testing.T, file, phrase string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var words []string
	for _, line := range strings.Split(string(b), "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(line), "//"); ok {
			words = append(words, strings.Fields(c)...)
		}
	}
	if !strings.Contains(strings.Join(words, " "), strings.Join(strings.Fields(phrase), " ")) {
		t.Errorf("%s does not say %q", file, phrase)
	}
}

// held: log/slog's text and JSON handlers with slog.Any, a pointer, a nil
// pointer, groups (slog.Group, Logger.WithGroup, With), a LogValuer chain
// that ends in a Token, ReplaceAttr seeing the (resolved) value, AddSource,
// a slice of Tokens and a map of Tokens (their MarshalJSON), a struct
// embedding a Token, and Token's MarshalIndent, omitempty pointer field,
// map key/value and embedding in encoding/json.
type attack107Chain struct{ next slog.LogValuer }

func (c attack107Chain) LogValue() slog.Value { return slog.AnyValue(c.next) }

func TestAttack107TokensSlogAndJSON(t *testing.T) {
	key, d := attack107Key(t)
	tk := Token{Authorization: "XBL3.0 x=123;" + attack107Tok, Signature: attack107Sig, Key: key}
	xt := XboxToken{UserHash: "123", Token: attack107Tok, DelegationToken: attack107Dlg, NotAfter: time.Unix(2e9, 0)}
	secrets := map[string]string{"token": attack107Tok, "signature": attack107Sig, "delegation token": attack107Dlg, "private key D": d}
	var nilTok *Token
	type embT struct {
		Token
		Extra string
	}
	chain := attack107Chain{attack107Chain{attack107Chain{tk}}}
	var seen []string
	for _, mk := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{AddSource: true, ReplaceAttr: func(g []string, a slog.Attr) slog.Attr {
				seen = append(seen, a.Value.String())
				return a
			}})
		},
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{ReplaceAttr: func(g []string, a slog.Attr) slog.Attr {
				seen = append(seen, a.Value.String(), fmt.Sprint(a.Value.Any()))
				return a
			}})
		},
	} {
		var b bytes.Buffer
		l := slog.New(mk(&b))
		l.Info("m", slog.Any("t", tk), slog.Any("p", &tk), slog.Any("x", xt), slog.Any("px", &xt), slog.Any("nil", nilTok))
		l.WithGroup("g").With("t", tk).Info("m", slog.Group("h", "x", &xt, "t", &tk))
		l.Info("m", "chain", chain, "slice", []Token{tk}, "map", map[string]Token{"a": tk}, "emb", embT{tk, "e"}, "ptrs", []*Token{&tk})
		l.Error("m", "err", fmt.Errorf("sign-in: %w", errors.New(fmt.Sprint(tk))))
		if leak := attack107Leaks(b.String(), secrets); len(leak) > 0 {
			t.Errorf("client/tokenfmt.go: \"Token and XboxToken ... log (log/slog, whatever the handler) with their secrets [redacted]\" — a handler printed %v", leak)
		}
	}
	if leak := attack107Leaks(strings.Join(seen, "\n"), secrets); len(leak) > 0 {
		t.Errorf("client/tokenfmt.go: LogValue redacted — ReplaceAttr was given %v", leak)
	}
	type withOmit struct {
		T  *Token `json:"t,omitempty"`
		T2 Token  `json:"t2,omitzero"`
		embT
	}
	for _, v := range []any{tk, &tk, []Token{tk}, map[string]*Token{"a": &tk}, withOmit{T: &tk, T2: tk, embT: embT{tk, "x"}}, []any{tk}} {
		for _, f := range []func(any) ([]byte, error){json.Marshal, func(v any) ([]byte, error) { return json.MarshalIndent(v, ">", "\t") }} {
			b, err := f(v)
			if err != nil {
				t.Fatalf("%T: %v", v, err)
			}
			if leak := attack107Leaks(string(b), secrets); len(leak) > 0 {
				t.Errorf("client/tokenfmt.go: \"Token's JSON is redacted too (it may hold a private key)\" — %T's JSON holds %v", v, leak)
			}
		}
	}
}

// held: an XboxToken in a struct field logged through slog's JSON handler
// is marshaled whole, the exception tokenfmt.go names (a value holding an
// XboxToken that the handler gives to encoding/json: a struct, a slice, a
// map); the XboxToken logged itself, by the same handler, is redacted.
func TestAttack107XboxTokenInStructSlogJSON(t *testing.T) {
	attack107DocSays(t, "tokenfmt.go", "XboxToken's JSON is whole (xblcall's config file stores it), so a value holding an XboxToken that slog's JSON handler gives to encoding/json (a struct, a slice, a map: LogValue is called only on the value logged) shows it.")
	xt := XboxToken{UserHash: "123", Token: attack107Tok, DelegationToken: attack107Dlg, NotAfter: time.Unix(2e9, 0)}
	type session struct {
		Player XboxToken
		Seat   int
	}
	var b bytes.Buffer
	l := slog.New(slog.NewJSONHandler(&b, nil))
	l.Info("joined", "player", xt, "ptr", &xt, "group", slog.GroupValue(slog.Any("player", xt)))
	if leak := attack107Leaks(b.String(), map[string]string{"token": attack107Tok, "delegation token": attack107Dlg}); len(leak) > 0 {
		t.Errorf("client/tokenfmt.go: \"XboxToken format (fmt, every verb) and log (log/slog, whatever the handler) with their secrets \\\"[redacted]\\\"\" — an XboxToken logged itself, slog.NewJSONHandler, printed its %v", leak)
	}
	b.Reset()
	l.Info("joined", "session", session{xt, 3})
	if !strings.Contains(b.String(), `"token":"`+attack107Tok+`"`) {
		t.Errorf("an XboxToken in a struct field, slog.NewJSONHandler: not its JSON, as tokenfmt.go says (%d bytes)", b.Len())
	}
}

// held: Token's XML is redacted as its JSON is ("it may hold a private
// key"); encoding/gob reads its fields by reflection, as tokenfmt.go and
// Token's godoc say.
func TestAttack107TokenXMLAndGob(t *testing.T) {
	attack107DocSays(t, "tokenfmt.go", "Token's JSON and XML are redacted too (it may hold a private key)")
	attack107DocSays(t, "tokenfmt.go", "the encoders and printers that read fields by reflection (encoding/gob, go-cmp's Diff, and the like)")
	attack107DocSays(t, "token.go", "encoders and printers that read fields by reflection (encoding/gob, go-cmp's Diff) see them as they are")
	key, d := attack107Key(t)
	tk := Token{Authorization: "XBL3.0 x=123;" + attack107Tok, Signature: attack107Sig, Key: key}
	secrets := map[string]string{"token": attack107Tok, "signature": attack107Sig, "private key D": d}
	b, err := xml.Marshal(tk)
	if err != nil {
		t.Fatal(err)
	}
	if leak := attack107Leaks(string(b), secrets); len(leak) > 0 {
		t.Errorf("client/tokenfmt.go: \"Printing a token shows who it is for, never the token ... Token's JSON is redacted too (it may hold a private key)\"; client/token.go Key: \"It never leaves the process.\" — xml.Marshal(Token) wrote its %v (%d bytes)", leak, len(b))
	}
	if !strings.Contains(string(b), "<Authorization>XBL3.0 [redacted]</Authorization>") {
		t.Errorf("xml.Marshal(Token) is not its redacted form (%d bytes)", len(b))
	}
	var g bytes.Buffer
	if err := gob.NewEncoder(&g).Encode(Token{Authorization: tk.Authorization, Signature: attack107Sig}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.String(), attack107Sig) {
		t.Errorf("gob encoded a Token without its fields, which tokenfmt.go says gob sees as they are")
	}
}

// held: cmp.Diff (go-cmp, which the project's tests use) prints what
// differs by reflection, as tokenfmt.go and XboxToken's godoc say: a test
// comparing two XboxTokens prints both tokens; fmt of the two does not.
func TestAttack107XboxTokenCmpDiff(t *testing.T) {
	attack107DocSays(t, "tokenfmt.go", "the encoders and printers that read fields by reflection (encoding/gob, go-cmp's Diff, and the like)")
	attack107DocSays(t, "signin.go", "encoders and printers that read fields by reflection (encoding/gob, go-cmp's Diff) see them as they are")
	a := XboxToken{UserHash: "123", Token: attack107Tok, NotAfter: time.Unix(2e9, 0)}
	b := a
	b.Token = "eyJ.OTHERSECRETTOKEN.9876543210"
	secrets := map[string]string{"token": attack107Tok, "the other token": b.Token}
	if out := cmp.Diff(a, b); len(attack107Leaks(out, secrets)) != 2 {
		t.Errorf("cmp.Diff of two XboxTokens does not show both tokens, which tokenfmt.go says it sees as they are")
	}
	if leak := attack107Leaks(fmt.Sprintf("%+v %+v", a, b), secrets); len(leak) > 0 {
		t.Errorf("client/tokenfmt.go: \"Printing a token shows who it is for, never the token\" — fmt of two XboxTokens printed %v", leak)
	}
}

// A ServiceSignIn and a SignIn hold tokens in unexported fields, where fmt
// cannot call XboxToken's Format: printing one (a config dump, %+v in a
// debug log) prints what it holds.
func TestAttack107ServiceSignInPrintsItsTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s, _, ux := delegatingService(t, h)
		st, err := s.Token(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		ut, err := s.Token(context.Background(), ux.XUID)
		if err != nil {
			t.Fatal(err)
		}
		_, svcTok, _ := strings.Cut(st.Authorization, ";")
		_, userTok, _ := strings.Cut(ut.Authorization, ";")
		secrets := map[string]string{"service X-token": svcTok, "delegated X-token": userTok, "delegation token": ux.DelegationToken}
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			out := fmt.Sprintf(verb, s)
			if leak := attack107Leaks(out, secrets); len(leak) > 0 {
				t.Errorf("client/tokenfmt.go: \"Printing a token shows who it is for, never the token\" — fmt.Sprintf(%q, *ServiceSignIn) printed its %v", verb, leak)
			}
		}
		var b bytes.Buffer
		slog.New(slog.NewTextHandler(&b, nil)).Info("config", "signin", s)
		if leak := attack107Leaks(b.String(), secrets); len(leak) > 0 {
			t.Errorf("client/tokenfmt.go: \"log (log/slog, whatever the handler)\" — a *ServiceSignIn through slog's text handler printed its %v", leak)
		}
		// Its exported fields: the partner certificate's private key and
		// the proof key, through slog's JSON handler (json.Marshal).
		pk, ok := s.Certificate.PrivateKey.(*ecdsa.PrivateKey)
		if !ok {
			t.Fatalf("the partner key is a %T", s.Certificate.PrivateKey)
		}
		raw, err := pk.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		proof, proofD := attack107Key(t)
		s2 := &ServiceSignIn{Certificate: s.Certificate, ProofKey: proof}
		keys := map[string]string{"partner certificate's private key D": new(big.Int).SetBytes(raw).String(), "proof key D": proofD}
		b.Reset()
		slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "signin", s2)
		if leak := attack107Leaks(b.String(), keys); len(leak) > 0 {
			t.Errorf("client/service.go: \"Every request made with them is signed with the proof key (Token.Key), which never leaves the process\"; client/tokenfmt.go: \"log (log/slog, whatever the handler)\" — a *ServiceSignIn through slog's JSON handler printed its %v", leak)
		}
	})
}

func TestAttack107SignInPrintsDroppedTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := mock.NewHandler()
		s := signInAt(t, h)
		x, err := s.XboxToken(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		nx, err := s.Renew(context.Background(), x.Authorization())
		if err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{"old XSTS token": x.Token, "new XSTS token": nx.Token}
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			out := fmt.Sprintf(verb, s)
			if leak := attack107Leaks(out, secrets); len(leak) > 0 {
				t.Errorf("client/tokenfmt.go: \"Printing a token shows who it is for, never the token\" — fmt.Sprintf(%q, *SignIn) after a Renew printed its %v", verb, leak)
			}
		}
	})
}
