package mock

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// login.live.com's device code sign-in: oauth20_connect.srf gives a
// device code and the code the user types at the verification page;
// oauth20_token.srf, polled with the device code grant, answers pending,
// slow down, declined or expired until the user has approved, then the
// tokens. The facts (a public record of the real service, "GDK titles:
// what sake provides in place of Gaming Services", 2026-09-29; RFC 8628):
// the page is https://www.microsoft.com/link, the code lives 15 minutes
// and is polled every 5 seconds, no verification_uri_complete is given;
// clients poll with grant_type urn:ietf:params:oauth:grant-type:device_code
// or device_code.

// The world's ways of answering a device code (World.DeviceCodes).
const (
	deviceCodesApprove = "approve"
	deviceCodesPage    = "page"
	deviceCodesDeny    = "deny"
)

const (
	liveDeviceCodeLife = 15 * time.Minute
	liveDeviceInterval = 5 * time.Second
	liveVerifyURI      = "https://www.microsoft.com/link"
	// pendingWindow bounds the device codes whose answer the mock keeps:
	// one entry each, by serial; a code whose entry a later code took is
	// expired, as one whose 15 minutes are over.
	pendingWindow = 1 << 12
)

// Device codes' states.
const (
	codePending uint8 = iota
	codeApproved
	codeDenied
	codeRedeemed
)

// pendingCode is what the mock keeps of a device code.
type pendingCode struct {
	serial uint64
	user   string
	state  uint8
	polled time.Time // the last poll; zero before the first
}

// pendings is the record of device codes. The zero value is ready; it is
// guarded by signIn.mu.
type pendings struct{ ring []pendingCode }

// put records e, in the place of the code pendingWindow serials before
// it. The caller holds signIn.mu.
func (p *pendings) put(e pendingCode) {
	if p.ring == nil {
		p.ring = make([]pendingCode, pendingWindow)
	}
	p.ring[e.serial%pendingWindow] = e
}

// entry returns the record of the code numbered serial, or nil once a
// later code took its place. The caller holds signIn.mu.
func (p *pendings) entry(serial uint64) *pendingCode {
	if p.ring == nil || serial == 0 {
		return nil
	}
	if e := &p.ring[serial%pendingWindow]; e.serial == serial {
		return e
	}
	return nil
}

// userCode is the code the user types for the device code numbered
// serial: 8 letters and digits, under the mock's key so that it cannot be
// guessed from the serial.
func (s *signIn) userCode(serial uint64) string {
	const alphabet = "BCDFGHJKLMNPQRSTVWXZ23456789" // no vowels, no 0, O, 1 or I
	m := hmac.New(sha256.New, s.key[:])
	binary.Write(m, binary.BigEndian, serial)
	sum := m.Sum(nil)
	var b [8]byte
	for i := range b {
		b[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(b[:])
}

// codeSerial is the serial a one-time code carries (mintCode), or 0.
func codeSerial(code string) uint64 {
	k, _, _ := strings.Cut(code, ".")
	_, serial, _ := strings.Cut(k, "~")
	n, _ := strconv.ParseUint(serial, 10, 64)
	return n
}

// liveDeviceCode is POST oauth20_connect.srf (response_type=device_code).
func (s *signIn) liveDeviceCode(w http.ResponseWriter, r *http.Request) {
	form, ok := readForm(w, r)
	if !ok {
		return
	}
	clientID := form.Get("client_id")
	switch {
	case clientID == "":
		oauthError(w, "invalid_request", "The request must contain a client_id.")
		return
	case form.Get("response_type") != "device_code":
		oauthError(w, "unsupported_response_type", "The mock answers response_type=device_code only.")
		return
	}
	now := s.w.now()
	code := s.mintCode("ld", s.signingIn(), now.Add(liveDeviceCodeLife), clientID)
	n := codeSerial(code)
	e := pendingCode{serial: n, user: s.userCode(n)}
	switch s.w.ix.Load().src.DeviceCodes {
	case "", deviceCodesApprove:
		e.state = codeApproved
	case deviceCodesDeny:
		e.state = codeDenied
	}
	s.mu.Lock()
	s.pending.put(e)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"user_code": e.user, "device_code": code, "verification_uri": liveVerifyURI,
		"expires_in": int(liveDeviceCodeLife / time.Second), "interval": int(liveDeviceInterval / time.Second),
	})
}

// The device code poll's refusals: RFC 8628 3.5's codes; the expired
// one's description as login.live.com words it (quoted in a public pull
// request, Sandertv/gophertunnel#232).
const liveExpiredCode = "The provided value for the input parameter 'device_code' is not valid. This device code has expired."

// pollDeviceCode answers a poll of login.live.com's token endpoint with a
// device code: the XUID it is approved for, or the refusal it answered.
func (s *signIn) pollDeviceCode(w http.ResponseWriter, code, clientID string, now time.Time) (string, bool) {
	xuid, valid := s.check(code, strings.SplitN(code, ".", 2)[0], now)
	bound := strings.HasPrefix(code, boundKind("ld", clientID)+"~")
	if !bound {
		oauthError(w, "invalid_grant", "The provided value for the input parameter 'device_code' is not valid.")
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var e *pendingCode // only a code this mock minted reaches its entry: a forged one naming its serial changes nothing
	if valid {
		e = s.pending.entry(codeSerial(code))
	}
	refuse := ""
	switch {
	case e == nil || e.state == codeRedeemed:
		refuse = "expired_token"
	case e.state == codeDenied:
		refuse = "access_denied"
	case !e.polled.IsZero() && now.Sub(e.polled) < liveDeviceInterval:
		refuse = "slow_down"
	case e.state == codePending:
		refuse = "authorization_pending"
	}
	if e != nil {
		e.polled = now
	}
	switch refuse {
	case "":
		e.state = codeRedeemed
		return xuid, true
	case "expired_token":
		oauthError(w, refuse, liveExpiredCode)
	case "access_denied":
		oauthError(w, refuse, "The user has denied access to the scope requested by the client application.")
	case "slow_down":
		oauthError(w, refuse, "The client is polling too quickly and should back off at a reasonable rate.")
	default:
		oauthError(w, refuse, "The user has not yet authorized the device code.")
	}
	return "", false
}

// liveRemoteConnect is the verification page (microsoft.com/link sends
// the user to login.live.com's oauth20_remoteconnect.srf): the user code
// in otc, given by GET or POST, is approved as the current account.
func (s *signIn) liveRemoteConnect(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10) // as readForm's bound; ParseForm's own is 10 MB
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	otc := strings.ToUpper(strings.ReplaceAll(r.Form.Get("otc"), "-", ""))
	s.mu.Lock()
	found := false
	for i := range s.pending.ring {
		if e := &s.pending.ring[i]; otc != "" && e.user == otc && e.state == codePending {
			e.state, found = codeApproved, true
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if !found {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte("<!doctype html><title>Enter code</title><p>That code didn't work. Check the code and try again.</p>\n"))
		return
	}
	w.Write([]byte("<!doctype html><title>Signed in</title><p>You have signed in on your device. You can close this window.</p>\n"))
}
