package client

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Printing a token shows who it is for, never the token: Token and
// XboxToken format (fmt, every verb) and log (log/slog, whatever the
// handler) with their secrets "[redacted]". Token's JSON is redacted too
// (it may hold a private key); XboxToken's is whole (xblcall's config file
// stores it), so an XboxToken inside a slice or map logged through slog's
// JSON handler, which marshals such values without LogValue, shows it.

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

// MarshalJSON is t redacted, as LogValue gives it: a Token is not stored.
func (t Token) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Authorization string `json:"authorization"`
		Signature     string `json:"signature"`
		Key           bool   `json:"key"`
	}{authorizationShown(t.Authorization), shown(t.Signature), t.Key != nil})
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
