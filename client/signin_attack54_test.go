package client

// attack54: does a sign-in step's SignInError carry a secret of another
// step (or a token still in use)? Hostile sign-in hosts of one operator
// (attack50Hostile), which quote in a refusal what another host, or an
// earlier answer, holds.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func attack54Leaks(t *testing.T, err error, secrets map[string]string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	text := err.Error() + "\n" + fmt.Sprintf("%+v\n%#v", err, err)
	for u := err; u != nil; {
		text += "\n" + u.Error()
		w, ok := u.(interface{ Unwrap() error })
		if !ok {
			break
		}
		u = w.Unwrap()
	}
	for name, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("the error carries the %s: %.400s", name, err)
		}
	}
}

const (
	attack54XSTS1 = "eyXSTS-first-SECRET-00112233445566778899"
	attack54Dlg1  = "eyDelegation-first-SECRET-aabbccddeeff0011"
)

// TestAttack54SignInXSTSRenewalEchoesTokenInUse: a sign-in whose XSTS token
// lives 4 s (renewed 2 s before it expires: Margin is at most half its
// life) is renewed while that token, and its DelegationToken claim, are
// still valid and in use. XSTS refuses the renewal with a Message quoting
// both. The user token is cached, so this renewal posts only it: the
// token in use is no secret the request carried, and is not scrubbed.
//
// BREAK. Promise: RELIABILITY.md "client errors never repeat a token";
// RELIABILITY.md (2026-12-07) "each Xbox step's error is scrubbed of the
// Microsoft account's tokens too"; signin.go's own comment "The refusal
// of one step may quote another's secret".
func TestAttack54SignInXSTSRenewalEchoesTokenInUse(t *testing.T) {
	var xsts atomic.Int64
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if attack50OK(w, r, host) {
			return
		}
		if xsts.Add(1) == 1 {
			now := time.Now().UTC()
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123","xid":"2533274791234567","DelegationToken":%q}]}}`,
				now.Format(time.RFC3339), now.Add(4*time.Second).Format(time.RFC3339), attack54XSTS1, attack54Dlg1)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": "refused; you still hold " + attack54XSTS1 + " delegating " + attack54Dlg1})
	})
	s := attack50SignIn(hc)
	x, err := s.XboxToken(context.Background())
	if err != nil || x.Token != attack54XSTS1 {
		t.Fatalf("first sign-in: %+v %v", x, err)
	}
	time.Sleep(2500 * time.Millisecond) // due for renewal, still valid (NotAfter is 1.5 s away)
	_, err = s.XboxToken(context.Background())
	if xsts.Load() < 2 {
		t.Fatalf("no renewal was sent (err %v)", err)
	}
	attack54Leaks(t, err, map[string]string{"XSTS token still in use": attack54XSTS1, "its DelegationToken": attack54Dlg1})
}

// TestAttack54SignInMicrosoftRefreshEchoesXboxTokens: the Microsoft access
// token expires at once (expires_in 1), the user and XSTS tokens live 4 s;
// at their renewal (both still valid) the Microsoft refresh is refused
// with an error_description quoting the Xbox user token and the XSTS
// token in use. microsoftError scrubs the Microsoft tokens and the client
// secret only.
//
// BREAK. Promise: RELIABILITY.md "client errors never repeat a token";
// signin.go "The refusal of one step may quote another's secret (one
// operator's hosts may share what each was sent)".
func TestAttack54SignInMicrosoftRefreshEchoesXboxTokens(t *testing.T) {
	var ms atomic.Int64
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		now := time.Now().UTC()
		switch host {
		case "login.microsoftonline.com":
			w.Header().Set("Content-Type", "application/json")
			if ms.Add(1) == 1 {
				fmt.Fprintf(w, `{"token_type":"Bearer","access_token":%q,"refresh_token":%q,"expires_in":1}`, attack50Access, attack50Refresh)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_grant","error_description":"user token %s xsts %s"}`, attack50User, attack54XSTS1)
		case "user.auth.xboxlive.com":
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123"}]}}`,
				now.Format(time.RFC3339), now.Add(4*time.Second).Format(time.RFC3339), attack50User)
		default:
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"123","xid":"2533274791234567"}]}}`,
				now.Format(time.RFC3339), now.Add(4*time.Second).Format(time.RFC3339), attack54XSTS1)
		}
	})
	s := attack50SignIn(hc)
	if _, err := s.XboxToken(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	_, err := s.XboxToken(context.Background())
	if ms.Load() < 2 {
		t.Fatalf("no Microsoft refresh was sent (err %v)", err)
	}
	attack54Leaks(t, err, map[string]string{"Xbox user token still valid": attack50User, "XSTS token in use": attack54XSTS1})
}

const (
	attack54UserA = "2533274790000011"
	attack54UserB = "2533274790000022"
	attack54DlgA  = "eyDelegationA-SECRET-0123456789abcdef0123"
	attack54DlgB  = "eyDelegationB-SECRET-fedcba9876543210fedc"
	attack54STok  = "eySToken-SECRET-5566778899aabbccddeeff00"
	attack54XB    = "eyXTokenB-SECRET-00aa11bb22cc33dd44ee55ff"
	attack54XSvc  = "eyXTokenService-SECRET-9988776655443322110"
)

// attack54Service is a ServiceSignIn against hostile sign-in hosts: XSAS gives
// the S-token (or refuses once xsas() says so), XSTS gives the service's
// own X-token and user B's, and refuses user A quoting what refuseA
// returns.
func attack54Service(t *testing.T, xsasRefusal func() string, refuseA string) *ServiceSignIn {
	t.Helper()
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		now := time.Now().UTC()
		b, _ := io.ReadAll(r.Body)
		body := string(b)
		ok := func(tok, xid string) {
			fmt.Fprintf(w, `{"IssueInstant":%q,"NotAfter":%q,"Token":%q,"DisplayClaims":{"xui":[{"uhs":"77","xid":%q}]}}`,
				now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339), tok, xid)
		}
		switch host {
		case "service.auth.xboxlive.com":
			if m := xsasRefusal(); m != "" {
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": m})
				return
			}
			ok(attack54STok, "")
		case "xsts.auth.xboxlive.com":
			switch {
			case strings.Contains(body, attack54DlgB):
				ok(attack54XB, attack54UserB)
			case strings.Contains(body, attack54DlgA):
				w.WriteHeader(http.StatusUnauthorized)
				json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": refuseA})
			default:
				ok(attack54XSvc, "")
			}
		}
	})
	s := &ServiceSignIn{HTTPClient: hc, Timeout: 3 * time.Second}
	if err := s.SetDelegation(attack54UserA, attack54DlgA); err != nil {
		t.Fatal(err)
	}
	if err := s.SetDelegation(attack54UserB, attack54DlgB); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAttack54ServiceXSTSEchoesOtherUsersSecrets: a service acts for users A
// and B. The service's own X-token and B's come first; then XSTS refuses
// A's delegation with a Message quoting B's delegation token, B's X-token
// and the service's own X-token. A's error scrubs what A's request
// carried (A's delegation token, the S-token, the Signature) and nothing
// else.
//
// BREAK. Promise: RELIABILITY.md "client errors never repeat a token";
// RELIABILITY.md (2026-12-07) "each sign-in step's error is scrubbed of
// ... tokens" / signin.go "The refusal of one step may quote another's
// secret"; ServiceSignIn godoc (the tokens a service holds for each
// user: a delegation token is the user's credential).
func TestAttack54ServiceXSTSEchoesOtherUsersSecrets(t *testing.T) {
	s := attack54Service(t, func() string { return "" },
		"refused A; B's delegation "+attack54DlgB+" B's token "+attack54XB+" service's "+attack54XSvc+" S-token "+attack54STok+" A's "+attack54DlgA)
	ctx := context.Background()
	if _, err := s.Token(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Token(ctx, attack54UserB); err != nil {
		t.Fatal(err)
	}
	_, err := s.Token(ctx, attack54UserA)
	attack54Leaks(t, err, map[string]string{"user B's delegation token": attack54DlgB, "user B's X-token": attack54XB,
		"the service's own X-token": attack54XSvc, "the S-token (posted)": attack54STok, "user A's delegation token (posted)": attack54DlgA})
}

// TestAttack54ServiceXSASEchoesDelegationTokens: XSAS (the S-token step, which
// posts only the proof key) refuses with a Message quoting the delegation
// tokens the service holds. The S-token step's error is scrubbed of
// nothing it did not send.
//
// BREAK. Promise: RELIABILITY.md "client errors never repeat a token";
// signin.go "The refusal of one step may quote another's secret (one
// operator's hosts may share what each was sent)": XSTS was sent these
// delegation tokens.
func TestAttack54ServiceXSASEchoesDelegationTokens(t *testing.T) {
	s := attack54Service(t, func() string { return "no S-token; delegations " + attack54DlgA + " and " + attack54DlgB }, "")
	_, err := s.Token(context.Background(), attack54UserA)
	attack54Leaks(t, err, map[string]string{"user A's delegation token": attack54DlgA, "user B's delegation token": attack54DlgB})
}

// held: RELIABILITY.md (2026-12-07) "each Xbox step's error is scrubbed of
// the Microsoft account's tokens too": the user-token step refusing with
// the Microsoft refresh token, the access token (posted), the refresh
// token URL-escaped and upper-cased, tells none of them.
func TestAttack54SignInUserTokenEchoesMicrosoftTokens(t *testing.T) {
	hc := attack50Hostile(t, func(w http.ResponseWriter, r *http.Request, host string) {
		if host == "login.microsoftonline.com" {
			attack50OK(w, r, host)
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"XErr": 1, "Message": "refresh " + attack50Refresh + " access " + attack50Access +
			" upper " + strings.ToUpper(attack50Refresh)})
	})
	s := &SignIn{OAuth: MicrosoftOAuth("atk-client"), HTTPClient: hc, Timeout: 3 * time.Second,
		Microsoft: &oauth2.Token{RefreshToken: attack50Refresh}}
	_, err := s.XboxToken(context.Background())
	attack54Leaks(t, err, map[string]string{"refresh token": attack50Refresh, "access token": attack50Access,
		"refresh token upper-cased": strings.ToUpper(attack50Refresh)})
}
