package mock

import (
	"net/http"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblsign"
	"github.com/xblgo/fgrl/limits"
)

// serviceAuthServices are the services that take a service-auth X-token,
// one naming no user: multiplayer (MPSD), string verification and deleted
// accounts ("Title service calls to Xbox services"); the mock serves MPSD
// of them, and the string verification host when its limits name it.
var serviceAuthServices = []string{"mpsd", "stringverification", "deletedaccounts"}

// serviceAuthHosts are their hosts, for limits data that names them under
// another service.
var serviceAuthHosts = []string{"client-strings.xboxlive.com"}

// boundIdentity is the authenticate stage (authenticate) for an X-token
// of the service sign-in, of kind "xs" (service auth) or "xd" (delegated),
// whose userhash is uhs: the caller it names, or false once it has
// answered 401 (an expired token, one not this mock's) or 403 (a request
// not signed with the token's proof key, signed outside the skew window
// or presented before, a service-auth token at a service that does not
// take one).
func (h *Handler) boundIdentity(x *exchange, rule *limits.Rule, kind, uhs, tok string) (identity, bool) {
	r := x.r
	now := h.cfg.now()
	t, ok := h.signIn.checkDetail(tok, kind, now)
	if !ok {
		if t.expired {
			refuseExpired(x.w, "the X-token")
		} else {
			writeError(x.w, http.StatusUnauthorized, "Unauthorized", "the X-token is not one this mock's XSTS minted")
		}
		return identity{}, false
	}
	pub, f, ok := unpackKey(t.xuid, 4) // service, sandbox, user, relying party
	if !ok {
		writeError(x.w, http.StatusUnauthorized, "Unauthorized", "the X-token is not one this mock's XSTS minted")
		return identity{}, false
	}
	name, xuid, rp := f[0], f[2], f[3]
	switch {
	case rp != "http://xboxlive.com" && rp != "https://xboxlive.com":
		writeError(x.w, http.StatusUnauthorized, "Unauthorized", "the X-token is for relying party "+safetext.Quote(rp, 100)+", not the Xbox services'")
		return identity{}, false
	case kind == "xs" && uhs != "-", kind == "xd" && uhs != UserHash(xuid):
		writeError(x.w, http.StatusUnauthorized, "Unauthorized", `the userhash is not the token's ("-" for a service-auth token)`)
		return identity{}, false
	case kind == "xs" && !slices.Contains(serviceAuthServices, rule.Service) && !slices.Contains(serviceAuthHosts, strings.ToLower(hostOnly(r.Host))):
		writeError(x.w, http.StatusForbidden, "Forbidden", "a service-auth X-token is taken by string verification, multiplayer and deleted accounts only; act for a user with a delegated one")
		return identity{}, false
	}
	if err := xblsign.Verify(r, xblsign.ProofKeyOf(pub), now, xblsign.DefaultPolicy(), signatureSkew); err != nil {
		writeError(x.w, http.StatusForbidden, "Forbidden", err.Error())
		return identity{}, false
	}
	switch f, wait := h.signIn.freshService(r.Header.Get("Signature"), xblsign.ProofKeyOf(pub), now); f {
	case sigReplay:
		writeError(x.w, http.StatusForbidden, "Forbidden", "the signature was presented before (a replay)")
		return identity{}, false
	case sigFull:
		refuseFull(x.w, wait)
		return identity{}, false
	}
	if kind == "xs" {
		// A service-auth call counts against the service's own identity.
		return identity{title: h.signIn.w.signInTitle, userhash: "svc:" + name}, true
	}
	return identity{xuid: xuid, title: h.signIn.w.signInTitle, userhash: uhs}, true
}
