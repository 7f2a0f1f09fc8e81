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

// The values that hold tokens or keys print, log and marshal as their type
// alone, as does a Config holding one in Tokens.
func TestHoldersPrintTheirTypeAlone(t *testing.T) {
	const tok = "XBL3.0 x=1;HOLDERSECRET"
	c, err := New(Config{Tokens: StaticTokens{"2533274790000000": tok}, TitleID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var nilSignIn *SignIn
	for _, tc := range []struct {
		v    any
		want string
	}{
		{&SignIn{}, "client.SignIn{[redacted]}"},
		{&ServiceSignIn{}, "client.ServiceSignIn{[redacted]}"},
		{c, "client.Client{[redacted]}"},
		{StaticTokens{"2533274790000000": tok}, "client.StaticTokens{[redacted]}"},
		{nilSignIn, "<nil>"},
	} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if got := fmt.Sprintf(verb, tc.v); got != tc.want {
				t.Errorf("Sprintf(%q, %T) = %q, want %q", verb, tc.v, got, tc.want)
			}
		}
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(tc.want)
		if tc.v == any(nilSignIn) {
			want = []byte("null") // encoding/json writes a nil pointer itself
		}
		if string(b) != string(want) {
			t.Errorf("json.Marshal(%T) = %s, want %s", tc.v, b, want)
		}
	}
	cfg := Config{Tokens: StaticTokens{"2533274790000000": tok}}
	var out []string
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		slog.New(h(&b)).Info("m", "config", cfg, "client", c)
		out = append(out, b.String())
	}
	out = append(out, fmt.Sprintf("%+v %#v", cfg, cfg))
	for _, o := range out {
		if strings.Contains(o, "HOLDERSECRET") {
			t.Errorf("a Config or Client printed its token: %q", o)
		}
	}
}
