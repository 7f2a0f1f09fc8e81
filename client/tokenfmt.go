package client

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"time"
)

// Printing a token shows who it is for, never the token: Token and
// XboxToken format (fmt, every verb) and log (log/slog, whatever the
// handler) with their secrets "[redacted]". Token's JSON and XML are
// redacted too (it may hold a private key); XboxToken's JSON is whole
// (xblcall's config file stores it), so a value holding an XboxToken that
// slog's JSON handler gives to encoding/json (a struct, a slice, a map:
// LogValue is called only on the value logged) shows it.
//
// The values that hold tokens, keys or a refresh token (SignIn,
// ServiceSignIn, Client, StaticTokens) print, log and marshal to JSON as
// their type alone, "client.SignIn{[redacted]}".
//
// What calls none of these methods sees the fields as they are: fmt's
// report of a wrong verb ("%!w(client.Token=...)" for %w of a value that
// is no error, %p of one that is no pointer; go vet flags both), and the
// encoders and printers that read fields by reflection (encoding/gob,
// go-cmp's Diff, and the like).

const redacted = "[redacted]"

// shown is s, or "" when it is empty, else redacted.
func shown(s string) string {
	if s == "" {
		return ""
	}
	return redacted
}

// authorizationShown is an Authorization value as printed: its scheme
// alone ("XBL3.0 [redacted]", as the transport logs one), or redacted.
func authorizationShown(a string) string {
	if a == "" {
		return ""
	}
	if scheme, _, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "XBL3.0") {
		return "XBL3.0 " + redacted
	}
	return redacted
}

// Format prints t with its token and signature redacted, and whether it
// holds a proof key.
func (t Token) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "{Authorization:%s Signature:%s Key:%v}", authorizationShown(t.Authorization), shown(t.Signature), t.Key != nil)
}

// LogValue is t for log/slog, redacted as Format prints it.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("authorization", authorizationShown(t.Authorization)),
		slog.String("signature", shown(t.Signature)), slog.Bool("key", t.Key != nil))
}

// tokenShown is a Token as it is written: redacted.
type tokenShown struct {
	Authorization string `json:"authorization"`
	Signature     string `json:"signature"`
	Key           bool   `json:"key"`
}

func (t Token) shown() tokenShown {
	return tokenShown{authorizationShown(t.Authorization), shown(t.Signature), t.Key != nil}
}

// MarshalJSON is t redacted, as LogValue gives it: a Token is not stored.
func (t Token) MarshalJSON() ([]byte, error) { return json.Marshal(t.shown()) }

// MarshalXML is t redacted, as MarshalJSON writes it.
func (t Token) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	return e.EncodeElement(t.shown(), start)
}

// Format prints t with its token and delegation token redacted.
func (t XboxToken) Format(f fmt.State, verb rune) {
	var b strings.Builder
	fmt.Fprintf(&b, "{UserHash:%s XUID:%s Gamertag:%q Token:%s NotAfter:%s", t.UserHash, t.XUID, t.Gamertag, shown(t.Token), t.NotAfter.Format(time.RFC3339))
	if t.DelegationToken != "" {
		b.WriteString(" DelegationToken:" + redacted)
	}
	b.WriteString("}")
	f.Write([]byte(b.String()))
}

// LogValue is t for log/slog, redacted as Format prints it.
func (t XboxToken) LogValue() slog.Value {
	return slog.GroupValue(slog.String("uhs", t.UserHash), slog.String("xid", t.XUID), slog.String("gtg", t.Gamertag),
		slog.String("token", shown(t.Token)), slog.Time("notAfter", t.NotAfter), slog.String("dlg", shown(t.DelegationToken)))
}

// holding is how v, a value that holds tokens or keys, prints: its type
// alone, "client.SignIn{[redacted]}", or "<nil>".
func holding[T any](v *T) string {
	if v == nil {
		return "<nil>"
	}
	return reflect.TypeFor[T]().String() + "{" + redacted + "}"
}

// Format prints s as its type alone: client.SignIn{[redacted]}.
func (s *SignIn) Format(f fmt.State, verb rune) { io.WriteString(f, holding(s)) }

// LogValue is s for log/slog, as Format prints it.
func (s *SignIn) LogValue() slog.Value { return slog.StringValue(holding(s)) }

// MarshalJSON is s as Format prints it: a SignIn is not stored
// (MicrosoftToken is).
func (s *SignIn) MarshalJSON() ([]byte, error) { return json.Marshal(holding(s)) }

// Format prints s as its type alone: client.ServiceSignIn{[redacted]}.
func (s *ServiceSignIn) Format(f fmt.State, verb rune) { io.WriteString(f, holding(s)) }

// LogValue is s for log/slog, as Format prints it.
func (s *ServiceSignIn) LogValue() slog.Value { return slog.StringValue(holding(s)) }

// MarshalJSON is s as Format prints it: its Certificate and ProofKey hold
// private keys.
func (s *ServiceSignIn) MarshalJSON() ([]byte, error) { return json.Marshal(holding(s)) }

// Format prints c as its type alone: client.Client{[redacted]}.
func (c *Client) Format(f fmt.State, verb rune) { io.WriteString(f, holding(c)) }

// LogValue is c for log/slog, as Format prints it.
func (c *Client) LogValue() slog.Value { return slog.StringValue(holding(c)) }

// MarshalJSON is c as Format prints it.
func (c *Client) MarshalJSON() ([]byte, error) { return json.Marshal(holding(c)) }

// Format prints s as its type alone: client.StaticTokens{[redacted]}.
func (s StaticTokens) Format(f fmt.State, verb rune) { io.WriteString(f, holding(&s)) }

// LogValue is s for log/slog, as Format prints it.
func (s StaticTokens) LogValue() slog.Value { return slog.StringValue(holding(&s)) }

// MarshalJSON is s as Format prints it.
func (s StaticTokens) MarshalJSON() ([]byte, error) { return json.Marshal(holding(&s)) }
