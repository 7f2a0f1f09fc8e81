package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// The client makes two of the Microsoft account's token requests itself
// rather than through golang.org/x/oauth2 (v0.38.0), whose refresh sends no
// scope, which the identity platform requires (AADSTS900144), and whose
// device code polling ends at a poll that timed out, where RFC 8628 3.5
// has the client poll again, less often.

// deviceCodeGrant is the device code flow's grant type (RFC 8628 3.4).
const deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

// tokenGrant posts form, a grant, to cfg's token endpoint with hc, adding
// cfg's client credentials (in the form, or in the Authorization header
// when cfg's AuthStyle is AuthStyleInHeader) and the scope (cfg's Scopes,
// or SignInScopes when it has none), and reads the token answer (RFC 6749
// 5.1). A refusal (5.2) is an *oauth2.RetrieveError, as x/oauth2 gives it;
// a request or a read of the answer that failed keeps its cause; an answer
// that is oversized, lacks access_token or states an expires_in that is no
// number is a *SignInError. Its errors go
// through microsoftError, which scrubs them.
func tokenGrant(ctx context.Context, hc *http.Client, cfg *oauth2.Config, form url.Values) (*oauth2.Token, error) {
	scopes := cfg.Scopes
	if len(scopes) == 0 {
		scopes = SignInScopes
	}
	form = maps.Clone(form)
	form.Set("scope", strings.Join(scopes, " "))
	inHeader := cfg.Endpoint.AuthStyle == oauth2.AuthStyleInHeader
	if !inHeader {
		form.Set("client_id", cfg.ClientID)
		if cfg.ClientSecret != "" {
			form.Set("client_secret", cfg.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, "POST", cfg.Endpoint.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if inHeader {
		req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAuthBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxAuthBody {
		return nil, &SignInError{Step: "Microsoft account", Status: resp.StatusCode, Message: "oversized answer"}
	}
	var a struct {
		AccessToken      string      `json:"access_token"`
		TokenType        string      `json:"token_type"`
		RefreshToken     string      `json:"refresh_token"`
		ExpiresIn        json.Number `json:"expires_in"`
		Error            string      `json:"error"`
		ErrorDescription string      `json:"error_description"`
		ErrorURI         string      `json:"error_uri"`
	}
	jerr := json.Unmarshal(data, &a)
	if resp.StatusCode < 200 || resp.StatusCode > 299 || a.Error != "" {
		return nil, &oauth2.RetrieveError{Response: resp, Body: data,
			ErrorCode: a.Error, ErrorDescription: a.ErrorDescription, ErrorURI: a.ErrorURI}
	}
	if jerr != nil || a.AccessToken == "" {
		return nil, &SignInError{Step: "Microsoft account", Status: resp.StatusCode, Message: "the answer lacks access_token"}
	}
	tok := &oauth2.Token{AccessToken: a.AccessToken, TokenType: a.TokenType, RefreshToken: a.RefreshToken}
	if a.ExpiresIn != "" {
		n, ok := expiresIn(a.ExpiresIn)
		if !ok {
			return nil, &SignInError{Step: "Microsoft account", Status: resp.StatusCode, Message: "the answer's expires_in is not a number of seconds"}
		}
		if n != 0 { // as x/oauth2 reads 0: no expiry stated
			tok.ExpiresIn = n
			tok.Expiry = time.Now().Add(time.Duration(n) * time.Second)
		}
	}
	var raw map[string]any
	json.Unmarshal(data, &raw)
	return tok.WithExtra(raw), nil
}

// expiresIn reads a token answer's expires_in (RFC 6749 5.1: the token's
// lifetime in seconds) as whole seconds within ±math.MaxInt32 (68 years),
// a fraction or an exponent too (3600.5, 3.6e3: JSON numbers a service may
// write), rounded down. ok is false for what is no finite number. A token
// with no expiry would be valid forever (oauth2.Token.Valid) and never
// renewed, so an expires_in given must be read.
func expiresIn(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return max(min(i, math.MaxInt32), -math.MaxInt32), true
	}
	f, err := n.Float64()
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	return int64(max(min(math.Floor(f), math.MaxInt32), -math.MaxInt32)), true
}

// pollDevice polls cfg's token endpoint with hc until the user has entered
// da's code (RFC 8628 3.4, 3.5): every da.Interval seconds (5 when it has
// none), 5 s more for this and every later poll after a slow_down, and
// twice as long after a poll that timed out (a network timeout, or the
// poll's own deadline), which it sends again. It ends with the token, at
// any other refusal or failure, when the code expires, or when ctx ends.
func pollDevice(ctx context.Context, hc *http.Client, cfg *oauth2.Config, da *oauth2.DeviceAuthResponse) (*oauth2.Token, error) {
	if !da.Expiry.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, da.Expiry)
		defer cancel()
	}
	ss := xblauth.Secrets{}.Add(da.DeviceCode)
	interval := 5 * time.Second
	if da.Interval > 0 && da.Interval <= math.MaxInt64/int64(time.Second) {
		interval = time.Duration(da.Interval) * time.Second
	}
	form := url.Values{"grant_type": {deviceCodeGrant}, "device_code": {da.DeviceCode}}
	for {
		if !sleep(ctx, interval) {
			return nil, ended("Microsoft account", ctx.Err())
		}
		tok, err := tokenGrant(ctx, hc, cfg, form)
		var re *oauth2.RetrieveError
		var ne net.Error
		switch {
		case err == nil:
			return tok, nil
		case errors.As(err, &re) && re.ErrorCode == "authorization_pending":
		case errors.As(err, &re) && re.ErrorCode == "slow_down":
			interval = min(interval, math.MaxInt64-5*time.Second) + 5*time.Second // no overflow
		case ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout():
			if interval < time.Hour { // longer than any code lives; no overflow
				interval *= 2
			}
		default:
			return nil, microsoftError(err, cfg, ss)
		}
	}
}
