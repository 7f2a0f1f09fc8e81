package client

// attack55: the sign-in's knownSecrets ("every step's error is scrubbed of
// every credential the sign-in holds") attacked by other paths: a renewal
// forced by a 401 (Renew / RefreshToken), which drops the tokens still in
// use before it asks again, and echoes in other encodings.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	attack55XSTS1  = "eyAtkXSTS-first-SECRET-00112233445566778899aa"
	attack55Dlg1   = "eyAtkDelegation-first-SECRET-aabbccddeeff00"
	attack55User1  = "eyAtkUserToken-first-SECRET-0f1e2d3c4b5a69"
	attack55User2  = "eyAtkUserToken-second-SECRET-99887766554433"
	attack55XA1    = "eyAtkXTokenA-first-SECRET-1234567890abcdef"
	attack55STok1  = "eyAtkSToken-first-SECRET-fedcba0987654321"
	attack55UserA1 = "2533274790000011"
)

// TestAttack55SignInRenewAfter401EchoesTokensInUse: a signed-in user's call is
// refused with 401; the transport's RefreshToken (SignIn.Renew) drops the
// user and XSTS tokens and signs in again. XSTS refuses the renewal with a
// Message quoting the XSTS token just refused (still in use by every call
// already under way, and valid until its NotAfter), its DelegationToken
// and the previous user token (valid for 14 days). Renew set s.user and
// s.xsts to nil before the flight, so knownSecrets no longer holds them and
// none is scrubbed.
//
// BREAK. Promise: RELIABILITY.md (2026-12-07, 03:30) "every step's error
// is scrubbed of every credential the sign-in holds: the Microsoft tokens,
// the user token, the XSTS token and its delegation token
// (SignIn.knownSecrets)", row "an XSTS renewal refused with a Message
// quoting the XSTS token still in use and its DelegationToken";
// RELIABILITY.md "client errors never repeat a token".
func TestAttack55SignInRenewAfter401EchoesTokensInUse(t *testing.T) {
	var users, xsts atomic.Int64
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		now := time.Now().UTC()
		switch host {
		case "login.microsoftonline.com":
			attack50OK(w, r, host)
		case "user.auth.xboxlive.com":
			tok := attack55User1
			if users.Add(1) > 1 {
				tok = attack55User2
			}
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123"}]}}`,
				now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), tok)
		default:
			if xsts.Add(1) == 1 {
				fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123","xid":"2533274791234567","DelegationToken":%q}]}}`,
					now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), attack55XSTS1, attack55Dlg1)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": "refused; still valid: " + attack55XSTS1 + " dlg " + attack55Dlg1 + " user " + attack55User1})
		}
	})
	s := attack50SignIn(hc)
	x, err := s.XboxToken(context.Background())
	if err != nil || x.Token != attack55XSTS1 {
		t.Fatalf("first sign-in: %+v %v", x, err)
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings", nil)
	req.Header.Set("Authorization", x.Authorization())
	_, err = s.RefreshToken(req)
	if xsts.Load() < 2 {
		t.Fatalf("no renewal was sent (err %v)", err)
	}
	attack54Leaks(t, err, map[string]string{"XSTS token refused a moment ago, still in use": attack55XSTS1,
		"its DelegationToken": attack55Dlg1, "previous user token (still valid)": attack55User1})
}

// TestAttack55ServiceRenewAfter401EchoesXTokenInUse: a service's call for user A
// is refused with 401; ServiceSignIn.RefreshToken drops A's X-token
// (slot.tok set empty, kept only as slot.dropped) and asks XSTS again.
// XSTS refuses quoting the X-token just dropped (still carried by A's
// other calls under way) and the first S-token. knownSecrets reads
// d.slot.tok.Token, now "".
//
// BREAK. Promise: RELIABILITY.md (2026-12-07, 03:30) "each step's error is
// scrubbed of the S-token, the service's X-token and every user's
// delegation token and X-token"; RELIABILITY.md "client errors never
// repeat a token".
func TestAttack55ServiceRenewAfter401EchoesXTokenInUse(t *testing.T) {
	var xa atomic.Int64
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		now := time.Now().UTC()
		b, _ := io.ReadAll(r.Body)
		ok := func(tok, xid string) {
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"77","xid":%q}]}}`,
				now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), tok, xid)
		}
		switch host {
		case "service.auth.xboxlive.com":
			ok(attack55STok1, "")
		case "xsts.auth.xboxlive.com":
			if !strings.Contains(string(b), attack54DlgA) {
				ok(attack54XSvc, "")
				return
			}
			if xa.Add(1) == 1 {
				ok(attack55XA1, attack55UserA1)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": "refused; A's X-token in use " + attack55XA1})
		}
	})
	s := &ServiceSignIn{HTTPClient: hc, Timeout: 3 * time.Second}
	if err := s.SetDelegation(attack55UserA1, attack54DlgA); err != nil {
		t.Fatal(err)
	}
	tok, err := s.Token(context.Background(), attack55UserA1)
	if err != nil || !strings.Contains(tok.Authorization, attack55XA1) {
		t.Fatalf("first X-token: %+v %v", tok, err)
	}
	req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/xuid(1)/profile/settings", nil)
	req.Header.Set("Authorization", tok.Authorization)
	_, err = s.RefreshToken(req)
	if xa.Load() < 2 {
		t.Fatalf("no renewal was sent (err %v)", err)
	}
	attack54Leaks(t, err, map[string]string{"user A's X-token refused a moment ago, still in use": attack55XA1})
}

// attack55XSTSRefusing is a sign-in whose XSTS step refuses with msg(userToken).
func attack55XSTSRefusing(t *testing.T, msg func() string) error {
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": msg()})
	})
	_, err := attack50SignIn(hc).XboxToken(context.Background())
	return err
}

// held: RELIABILITY.md (2026-12-07, 03:30) "every step's error is scrubbed
// of every credential the sign-in holds". The XSTS refusal quotes the
// user token, the access token and the refresh token upper-cased,
// lower-cased, as a JSON document inside the Message, Go-quoted:
// none reaches the error.
func TestAttack55SignInEchoSpellingsHeld(t *testing.T) {
	for name, f := range map[string]func(string) string{
		"upper":     strings.ToUpper,
		"lower":     strings.ToLower,
		"as is":     func(s string) string { return s },
		"json in":   func(s string) string { b, _ := json.Marshal(map[string]string{"t": s}); return string(b) },
		"quoted %q": func(s string) string { return fmt.Sprintf("%q", s) },
	} {
		t.Run(name, func(t *testing.T) {
			err := attack55XSTSRefusing(t, func() string {
				return "u " + f(attack50User) + " a " + f(attack50Access) + " r " + f(attack50Refresh)
			})
			attack54Leaks(t, err, map[string]string{"user token": f(attack50User), "access token": f(attack50Access), "refresh token": f(attack50Refresh)})
		})
	}
}

// TestAttack55SignInEchoOtherEncodings: the XSTS step's refusal quotes
// the user token it was posted, base64-encoded, split by a line break (as
// a PEM-style wrap does), and URL-escaped with its unreserved '-' as %2D
// (a valid escape any URL decoder reads back). A scrubber of whole
// secrets finds none of these; the refusal's text now also loses each run
// of 24 bytes or more of a token's alphabet (safetext.HideOpaque). The
// user token here is as long as a real one (hundreds of bytes, base64url
// with a '-' now and then), so every piece left of it is under 24 bytes.
// Judged: a token of 35 bytes split in two leaves two visible pieces of
// 17 and 18 bytes; no real token is that short.
//
// Was a BREAK (base64: whole). Promise: RELIABILITY.md (2026-12-07, 03:30)
// "every step's error is scrubbed of every credential the sign-in holds";
// RELIABILITY.md "client errors never repeat a token".
func TestAttack55SignInEchoOtherEncodings(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 420; i++ {
		fmt.Fprintf(&b, "eyJ%08xQz%dKp", uint32(i)*2654435761, i)
		if i%5 == 4 {
			b.WriteByte('-')
		}
	}
	user := b.String()
	for name, enc := range map[string]func(string) string{
		"base64":     func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"line break": func(s string) string { return s[:len(s)/2] + "\n" + s[len(s)/2:] },
		"url %2D":    func(s string) string { return strings.ReplaceAll(s, "-", "%2D") },
	} {
		t.Run(name, func(t *testing.T) {
			hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
				now := time.Now().UTC()
				switch host {
				case "login.microsoftonline.com":
					attack50OK(w, r, host)
				case "user.auth.xboxlive.com":
					fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123"}]}}`,
						now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), user)
				default:
					w.WriteHeader(http.StatusUnauthorized)
					fmt.Fprintf(w, `{"XErr":1,"Message":"you sent %s"}`, enc(user))
				}
			})
			_, err := attack50SignIn(hc).XboxToken(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			text := err.Error() + fmt.Sprintf("%+v %#v", err, err)
			for _, piece := range strings.FieldsFunc(enc(user), func(c rune) bool { return c == '%' || c == '\\' || c == '-' }) {
				if len(piece) >= 24 && strings.Contains(text, piece) {
					t.Errorf("the error carries %d bytes of the user token (%s): %.300s", len(piece), name, err)
					break
				}
			}
		})
	}
}
