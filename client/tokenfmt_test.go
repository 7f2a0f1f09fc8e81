package client

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"
)

// Printing a token shows who it is for, never the token (tokenfmt.go):
// every fmt verb, and log/slog's text and JSON handlers.
func TestTokensPrintRedacted(t *testing.T) {
	const (
		tok = "eyJhbGciOiJSUzI1NiJ9.TOKENSECRET.0123456789"
		sig = "AAAAAQHSIGNATURESECRET0123456789"
		dlg = "DELEGATIONSECRET0123456789"
	)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := key.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Int).SetBytes(raw).String() // the private scalar as encoding/json writes a *big.Int
	values := []any{
		Token{Authorization: "XBL3.0 x=123;" + tok, Signature: sig, Key: key},
		&Token{Authorization: "Bearer " + tok},
		XboxToken{UserHash: "123", XUID: "2533274790000000", Gamertag: "Gamer", Token: tok, DelegationToken: dlg, NotAfter: time.Unix(2e9, 0)},
		&XboxToken{Token: tok},
		[]Token{{Authorization: "XBL3.0 x=1;" + tok}},
		map[string]Token{"a": {Authorization: "XBL3.0 x=1;" + tok, Key: key}},
	}
	for _, v := range values {
		var out []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		out = append(out, fmt.Sprint(v), fmt.Sprintln(v))
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		} {
			var b bytes.Buffer
			slog.New(h(&b)).Info("m", "token", v)
			out = append(out, b.String())
		}
		for _, o := range out {
			for _, s := range []string{"TOKENSECRET", "SIGNATURESECRET", "DELEGATIONSECRET", d} {
				if strings.Contains(o, s) {
					t.Errorf("%T printed %q", v, o)
				}
			}
		}
	}
	got := fmt.Sprintf("%v", values[2])
	for _, want := range []string{"123", "2533274790000000", "Gamer", "[redacted]"} {
		if !strings.Contains(got, want) {
			t.Errorf("XboxToken printed %q, without %q", got, want)
		}
	}
	// JSON is whole: xblcall's config file stores the token.
	b, _ := json.Marshal(values[2])
	if !strings.Contains(string(b), tok) {
		t.Errorf("XboxToken's JSON lost its token: %s", b)
	}
}
