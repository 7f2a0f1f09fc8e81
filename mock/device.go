package mock

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// Device-bound sign-in, as Xbox apps and consoles sign in: a device token
// for a proof key (device.auth.xboxlive.com), a title token
// (title.auth.xboxlive.com), each request signed with that key
// (internal/xblsign). Answers in the recorded shapes of
// OpenXbox/xbox-webapi-python (tests/data/responses/auth_device_token.json,
// xal_authorization_resp.json's TitleToken), requests as its xal.py and
// the npm clients send them.

// The device sign-in hosts.
const (
	deviceAuthHost = "device.auth.xboxlive.com"
	titleAuthHost  = "title.auth.xboxlive.com"
)

// Lifetimes of the device-bound tokens (the user token's order: a device
// token is renewed as rarely).
const (
	deviceTokenLife = 14 * 24 * time.Hour
	titleTokenLife  = 14 * 24 * time.Hour
)

// signatureSkew is how far a signature's time may be from the mock's
// clock. The services' own tolerance is not published; XAL corrects its
// clock from the Date header of a refused call, so a few minutes suffice.
const signatureSkew = 5 * time.Minute

// maxSignedBody bounds the body of a signed sign-in request; real ones
// are under 4 KiB.
const maxSignedBody = 64 << 10

// device is what a device token names: the device's ID ("did", 16 hex
// digits as recorded) and the proof key it was issued for. The key
// travels in the token, under the mock's signature, so the mock keeps
// nothing per device and every later signed call of the device is checked
// against the key the device registered.
type device struct {
	did string
	key xblsign.ProofKey
}

// deviceIDForm is the Id forms clients send: a GUID, bare (Win32, iOS in
// upper case) or in braces (Android), as xal.py's request_device_token
// writes them and @xboxreplay/xboxlive-auth's Win32 dummy sends it.
var deviceIDForm = regexp.MustCompile(`^(\{[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\}|[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})$`)

// deviceTypes are the DeviceType values the mock takes: those published
// clients send (xal.py's Android and iOS, the npm client's Win32) and the
// other platforms XAL names.
var deviceTypes = []string{"Android", "iOS", "Win32", "Nintendo", "Xbox", "Scarlett", "Web"}

// didOf is the device ID the mock gives a device's Id: 16 upper-case hex
// digits, as recorded ("F9E13DC7B0997D0D"), the same for the same Id in
// any of its forms.
func didOf(id string) string {
	norm := strings.ToLower(strings.Trim(id, "{}"))
	sum := sha256.Sum256([]byte("did:" + norm))
	return fmt.Sprintf("%X", sum[:8])
}

// bind is what a token minted for d is bound to: its ID and its key. The
// ID is the device's own word (any caller may claim any Id at
// device/authenticate); the key is what its signed calls prove.
func (d device) bind() []string { return []string{d.did, d.key.X, d.key.Y} }

// mintDevice makes a device token for d.
func (s *signIn) mintDevice(d device, now time.Time) string {
	return s.mint("dt", d.did+"\x00"+d.key.X+"\x00"+d.key.Y, now.Add(deviceTokenLife))
}

// deviceOf reads a device token minted by this mock, not expired at now.
func (s *signIn) deviceOf(tok string, now time.Time) (device, bool) {
	v, ok := s.check(tok, "dt", now)
	if !ok {
		return device{}, false
	}
	parts := strings.Split(v, "\x00")
	if len(parts) != 3 {
		return device{}, false
	}
	// Only mintDevice makes tokens of this kind, from a key deviceAuthenticate
	// checked (FuzzSignInToken: every device read names a key).
	return device{did: parts[0], key: xblsign.ProofKey{Kty: "EC", Crv: "P-256", Alg: "ES256", Use: "sig", X: parts[1], Y: parts[2]}}, true
}

// signedBody reads a signed request's body whole (at most maxSignedBody
// bytes) and leaves it readable again for the signature's check; on
// failure it answers (413 or 400) and returns false.
func signedBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxSignedBody+1))
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "BadRequest", "the body could not be read")
		return nil, false
	case len(b) > maxSignedBody:
		writeError(w, http.StatusRequestEntityTooLarge, "RequestTooLarge", "request body over the limit")
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, true
}

// verified checks r's Signature against key at the mock's clock: fresh
// (within signatureSkew) unless anyAge, and, when fresh is checked, never
// presented before (replays). On failure it answers as
// device.auth.xboxlive.com was measured to (a public record of the real
// service, "GDK titles: what sake provides in place of Gaming Services",
// 2026-09-29): 400 with an empty body for a request with no signature,
// 403 for one whose signature does not match; a stale or replayed one the
// mock refuses as one that does not match (its choice: the record has
// neither). It returns false when it answered.
func (s *signIn) verified(w http.ResponseWriter, r *http.Request, key xblsign.ProofKey, anyAge bool) bool {
	return s.verifiedUnder(w, r, key, xblsign.DefaultPolicy(), anyAge)
}

// verifiedUnder is verified under policy p.
func (s *signIn) verifiedUnder(w http.ResponseWriter, r *http.Request, key xblsign.ProofKey, p xblsign.Policy, anyAge bool) bool {
	skew := signatureSkew
	if anyAge {
		skew = 1 << 62
	}
	now := s.w.now()
	err := xblsign.Verify(r, key, now, p, skew)
	switch {
	case errors.Is(err, xblsign.ErrMissing):
		w.WriteHeader(http.StatusBadRequest)
		return false
	case err != nil:
		w.WriteHeader(http.StatusForbidden)
		return false
	case anyAge:
		return true
	}
	switch f, wait := s.fresh(r.Header.Get("Signature"), key, now); f {
	case sigReplay:
		w.WriteHeader(http.StatusForbidden)
		return false
	case sigFull:
		refuseFull(w, wait)
		return false
	}
	return true
}

// refuseFull answers a signed call the record of signatures has no room
// for (replays.go): 503, to come again when a place frees.
func refuseFull(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
	writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "too many signed calls within the signatures' window; try again after Retry-After")
}

// signedByDevice returns the device a device token names, the request
// signed with its key (verified): 401 for a token the mock did not mint;
// false when it answered.
func (s *signIn) signedByDevice(w http.ResponseWriter, r *http.Request, token string, now time.Time) (device, bool) {
	d, ok := s.deviceOf(token, now)
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return device{}, false
	}
	return d, s.verified(w, r, d.key, false)
}

// deviceAuthenticate is device.auth.xboxlive.com's device/authenticate:
// a device token for the proof key in the body, the request signed with
// that key.
//
// The signature's age is not checked here: @xboxreplay/xboxlive-auth
// 5.1.0 (createDummyWin32DeviceToken) sends one signature, made once, with
// every request, and is published as working, so the real service cannot
// be refusing old signatures at this endpoint. Its signature must still
// match the request and the key.
func (s *signIn) deviceAuthenticate(w http.ResponseWriter, r *http.Request) {
	b, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		RelyingParty, TokenType string
		Properties              struct {
			AuthMethod, Id, DeviceType, Version, SerialNumber string
			ProofKey                                          xblsign.ProofKey
		}
	}
	p := &req.Properties
	if json.Unmarshal(b, &req) != nil || req.RelyingParty != "http://auth.xboxlive.com" || req.TokenType != "JWT" ||
		p.AuthMethod != "ProofOfPossession" || !deviceIDForm.MatchString(p.Id) || !validDeviceType(p.DeviceType) || p.Version == "" {
		writeError(w, http.StatusBadRequest, "BadRequest", "not a device authentication request")
		return
	}
	if _, err := p.ProofKey.PublicKey(); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", "ProofKey is not an ES256 P-256 key")
		return
	}
	if !s.verified(w, r, p.ProofKey, true) {
		return
	}
	now := s.w.now()
	d := device{did: didOf(p.Id), key: p.ProofKey}
	writeJSON(w, http.StatusOK, map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": now.Add(deviceTokenLife).UTC().Format(time.RFC3339Nano),
		"Token":         s.mintDevice(d, now),
		"DisplayClaims": map[string]any{"xdi": map[string]string{"did": d.did, "dcs": "0"}},
	})
}

func validDeviceType(t string) bool {
	for _, v := range deviceTypes {
		if strings.EqualFold(v, t) {
			return true
		}
	}
	return false
}

// titleAuthenticate is title.auth.xboxlive.com's title/authenticate: a
// title token for a device, signed with the device's key. Clients send it
// in two forms (the forms are public; which the service prefers is not):
// the title's ID with the device's proof key (Properties.TitleId,
// ProofKey), or the user's login.live.com ticket (AuthMethod "RPS",
// RpsTicket, SiteName), for which the title is the mock's sign-in title.
func (s *signIn) titleAuthenticate(w http.ResponseWriter, r *http.Request) {
	b, ok := signedBody(w, r)
	if !ok {
		return
	}
	var req struct {
		RelyingParty, TokenType string
		Properties              struct {
			AuthMethod, DeviceToken, RpsTicket, SiteName string
			TitleId                                      json.Number
		}
	}
	if json.Unmarshal(b, &req) != nil || req.RelyingParty != "http://auth.xboxlive.com" {
		writeError(w, http.StatusBadRequest, "BadRequest", "not a title authentication request")
		return
	}
	now := s.w.now()
	d, ok := s.signedByDevice(w, r, req.Properties.DeviceToken, now)
	if !ok {
		return
	}
	tid := s.w.signInTitle
	switch {
	case req.Properties.TitleId != "":
		tid = req.Properties.TitleId.String()
	case req.Properties.AuthMethod == "RPS":
		if _, ok := s.rpsTicket(req.Properties.RpsTicket, now); !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	if len(tid) > maxIDBytes || strings.Trim(tid, "0123456789") != "" {
		writeError(w, http.StatusBadRequest, "BadRequest", "TitleId is not a title ID")
		return
	}
	writeJSON(w, http.StatusOK, s.titleToken(tid, d, now))
}

// titleToken is a title token's answer, as title/authenticate and SISU's
// authorize (TitleToken) give it.
func (s *signIn) titleToken(tid string, d device, now time.Time) map[string]any {
	return map[string]any{
		"IssueInstant": now.UTC().Format(time.RFC3339Nano), "NotAfter": now.Add(titleTokenLife).UTC().Format(time.RFC3339Nano),
		"Token":         s.mint(boundKind("tt", d.bind()...), tid, now.Add(titleTokenLife)),
		"DisplayClaims": map[string]any{"xti": map[string]string{"tid": tid}},
	}
}

// titleOf returns the title ID of a title token minted for device d.
func (s *signIn) titleOf(tok string, d device, now time.Time) (string, bool) {
	return s.check(tok, boundKind("tt", d.bind()...), now)
}
