package client

// A third attack (2026-12-04) on the fixes of 4cf74a6. Each test asserts
// the right behaviour; those named in RELIABILITY.md failed before their fix.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// TestThirdThrottleDebugMessageEchoesTransportSignature: a 429's
// debugMessage echoing the Signature the transport made for the attempt
// (a proof-key token) reached the error: the caller's request never held
// that Signature.
func TestThirdThrottleDebugMessageEchoesTransportSignature(t *testing.T) {
	signatureEchoed(t, func(w http.ResponseWriter, sig string) { write429(w, "sig "+sig) })
}

// TestThirdMalformedAnswerEchoesTransportSignature: net/http quotes a
// malformed status line in its error; the line can be the attempt's own
// Signature, which the caller's header never held.
func TestThirdMalformedAnswerEchoesTransportSignature(t *testing.T) {
	signatureEchoed(t, func(w http.ResponseWriter, sig string) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		rw.WriteString(sig + "\r\n\r\n")
		rw.Flush()
	})
}

// TestThirdThrottleDebugMessageClippedMidToken: the transport clipped a
// 429's debugMessage to 200 bytes before the client scrubbed it, so a
// token at the clip's edge was no longer whole and its first part stayed.
func TestThirdThrottleDebugMessageClippedMidToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), ";")
		write429(w, strings.Repeat("a", 178)+tok)
	}))
	defer srv.Close()
	c := hostileClient(t, srv, nil, "profile.xboxlive.com")
	err := failFastProfiles(c)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "SECRET-HOSTILE-TOK") {
		t.Errorf("the error carries the first part of the token: %.400q", err.Error())
	}
}

// TestThirdRefreshTokenEchoedInOAuthError: the Microsoft token endpoint's
// error_description echoing the refresh token it was posted reached
// SignInError's text.
func TestThirdRefreshTokenEchoedInOAuthError(t *testing.T) {
	const refresh = "SECRET-REFRESH-TOKEN-0123456789abcdef"
	fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r.ParseForm()
		resp := answer(r, fmt.Sprintf(`{"error":"invalid_grant","error_description":"refresh token %s has expired"}`, r.PostForm.Get("refresh_token")))
		resp.StatusCode = 400
		return resp, nil
	})
	s := &SignIn{OAuth: MicrosoftOAuth("client-id"), HTTPClient: &http.Client{Transport: fake},
		Microsoft: &oauth2.Token{AccessToken: "old", RefreshToken: refresh, Expiry: time.Now().Add(-time.Hour)}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.XboxToken(ctx)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "REFRESH-TOKEN") {
		t.Errorf("the sign-in error carries the refresh token it posted: %.400q", err.Error())
	}
}

// TestThirdAccessTokenEchoedWithoutTicketPrefix: user.auth is posted
// RpsTicket "d=<access token>"; an answer quoting the access token alone
// was not scrubbed.
func TestThirdAccessTokenEchoedWithoutTicketPrefix(t *testing.T) {
	const access = "SECRET-ACCESS-TOKEN-0123456789abcdef"
	fake := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var req struct{ Properties struct{ RpsTicket string } }
		json.NewDecoder(r.Body).Decode(&req)
		resp := answer(r, fmt.Sprintf(`{"XErr":0,"Message":"ticket %s is not valid"}`, strings.TrimPrefix(req.Properties.RpsTicket, "d=")))
		resp.StatusCode = 400
		return resp, nil
	})
	s := &SignIn{OAuth: MicrosoftOAuth("client-id"), HTTPClient: &http.Client{Transport: fake},
		Microsoft: &oauth2.Token{AccessToken: access, RefreshToken: "r", Expiry: time.Now().Add(time.Hour)}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.XboxToken(ctx)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "ACCESS-TOKEN") {
		t.Errorf("the sign-in error carries the access token it posted: %.400q", err.Error())
	}
}

// heldBy decodes body into a new value of out's type and returns how many
// times body's size it holds after a collection.
func heldBy[T any](t *testing.T, body []byte) float64 {
	t.Helper()
	var out T
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(out)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(len(body))
}

// TestThirdPointerFieldsAmplify: an element that sets a pointer field
// ({"detail":{}}, padded to 16 bytes) decoded into a whole HubPerson and a
// HubDetail, 20 times the answer's size, past a check that counted list
// elements only: objects count too, and any answer the check lets through
// holds at most about fifteen times its size.
func TestThirdPointerFieldsAmplify(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"people":[`)
	for i := range 200_000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"detail":{}}  `)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	if e := elements(body); e > 1024 && e > len(body)/minElementBytes {
		return // refused before it is decoded
	}
	if ratio := heldBy[struct {
		People []HubPerson `json:"people"`
	}](t, body); ratio > 16 {
		t.Errorf("an answer the density check lets through holds %.1f times its size (bound: about 15)", ratio)
	}
}

// TestThirdTitlePointersAmplify: the same through titlehub's Title, whose
// two pointer fields a 36-byte element sets.
func TestThirdTitlePointersAmplify(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"titles":[`)
	for i := range 100_000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"achievement":{},"titleHistory":{}}`)
	}
	b.WriteString(`]}`)
	body := []byte(b.String())
	if e := elements(body); e > 1024 && e > len(body)/minElementBytes {
		return
	}
	if ratio := heldBy[struct {
		Titles []Title `json:"titles"`
	}](t, body); ratio > 16 {
		t.Errorf("an answer the density check lets through holds %.1f times its size (bound: about 15)", ratio)
	}
}

// TestThirdElementsLinearAndDeep: elements on a 16 MiB body of escapes
// ends quickly, and nesting past maxNesting is refused.
func TestThirdElementsLinearAndDeep(t *testing.T) {
	deep := []byte(strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1))
	if n := elements(deep); n <= 1024 {
		t.Errorf("nesting past maxNesting counted %d", n)
	}
	big := []byte(`["` + strings.Repeat(`\\\"`, 4<<20) + `"]`)
	start := time.Now()
	elements(big)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("elements took %v on %d bytes", d, len(big))
	}
}

// TestThirdPostedSecretsLeaveOrdinaryText: every posted string of 16
// bytes or more was taken for a secret, so the relying party and the site
// name a refusal names were taken out of it too; only fields named like a
// credential are now, and a ticket's token alone.
func TestThirdPostedSecretsLeaveOrdinaryText(t *testing.T) {
	const access = "SECRET-ACCESS-TOKEN-0123456789abcdef"
	b, _ := json.Marshal(userTokenRequest(access))
	ss := xblauth.Secrets{}.PostedSecrets(b)
	msg := "SiteName user.auth.xboxlive.com is not allowed for RelyingParty http://auth.xboxlive.com"
	if got := ss.Scrub(msg); got != msg {
		t.Errorf("ordinary text scrubbed: %q", got)
	}
	if got := ss.Scrub("bad ticket d=" + access + ", token " + access); strings.Contains(got, "ACCESS-TOKEN") {
		t.Errorf("the ticket or its token left in: %q", got)
	}
}

// TestThirdScrubManySecretsLongText: Scrub is one ReplaceAll per secret;
// many secrets against a long answer stay fast.
func TestThirdScrubManySecretsLongText(t *testing.T) {
	var parts []string
	for i := range 3000 {
		parts = append(parts, fmt.Sprintf(`{"token":"s%015d"}`, i))
	}
	ss := xblauth.Secrets{}.PostedSecrets([]byte("[" + strings.Join(parts, ",") + "]"))
	if len(ss) != 3000 {
		t.Fatalf("%d secrets, want 3000", len(ss))
	}
	text := strings.Repeat("s00000000000000", 64<<10/15)
	start := time.Now()
	ss.Scrub(text)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Scrub of %d secrets on %d bytes took %v", len(ss), len(text), d)
	}
}
