package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/internal/xblsign"
)

// NSAL, a title's list of endpoints (title.mgt.xboxlive.com): for each
// host, the relying party whose XSTS token it takes and the signature
// policy its calls are signed under. In the recorded shape
// (OpenXbox/xbox-webapi-python tests/data/responses/auth_title_endpoints.json,
// models.py TitleEndpointsResponse), listing every host the mock serves,
// so that a client resolving its relying party from NSAL reaches each.

const titleMgtHost = "title.mgt.xboxlive.com"

// nsalEndpoint is one entry of EndPoints.
type nsalEndpoint struct {
	Protocol             string `json:"Protocol"`
	Host                 string `json:"Host"`
	HostType             string `json:"HostType"`
	RelyingParty         string `json:"RelyingParty,omitempty"`
	TokenType            string `json:"TokenType,omitempty"`
	SignaturePolicyIndex *int   `json:"SignaturePolicyIndex,omitempty"`
}

// nsalRelyingParties are the relying parties the recording gives hosts
// the mock serves whose party is not their domain's.
var nsalRelyingParties = map[string]string{
	"inventory.xboxlive.com":       "http://licensing.xboxlive.com",
	"collections.mp.microsoft.com": "http://licensing.xboxlive.com",
	sisuHost:                       "http://sisu.xboxlive.com/",
}

// nsalDomains are the recorded wildcard entries, with each domain's
// relying party: a host of the domain without an entry of its own takes
// it.
var nsalDomains = []struct{ wildcard, party string }{
	{"*.xboxlive.com", "http://xboxlive.com"},
	{"*.mp.microsoft.com", "http://mp.microsoft.com/"},
}

// nsalParty returns the relying party of the tokens the exact host (in
// lower case; a trailing dot, as the router takes it, ignored) takes, as
// the NSAL document gives it: its own entry's, else its domain's; "" for
// a host of no domain the document names.
func nsalParty(host string) string {
	host = strings.TrimSuffix(host, ".")
	if party, ok := nsalRelyingParties[host]; ok {
		return party
	}
	for _, d := range nsalDomains {
		if strings.HasSuffix(host, d.wildcard[1:]) {
			return d.party
		}
	}
	return ""
}

// isNSAL reports whether a request is for a title's endpoints:
// GET /titles/{default, current or a title ID}/endpoints.
func isNSAL(method, path string) bool {
	rest, ok := strings.CutPrefix(path, "/titles/")
	title, ok2 := strings.CutSuffix(rest, "/endpoints")
	return method == http.MethodGet && ok && ok2 && title != "" && !strings.Contains(title, "/")
}

// nsalDocument is the NSAL answer for a mock serving hosts (Hosts): every
// exact host but the Microsoft account sign-in's and the token services'
// (reached before any token), and the recorded wildcards and the bare
// domain; the one signature policy the mock checks (xblsign).
func nsalDocument(hosts []string) []byte {
	zero := 0
	entry := func(host, typ, party string) nsalEndpoint {
		return nsalEndpoint{Protocol: "https", Host: host, HostType: typ, RelyingParty: party, TokenType: "JWT", SignaturePolicyIndex: &zero}
	}
	var eps []nsalEndpoint
	for _, h := range hosts {
		if strings.Contains(h, "*") || (isSignInHost(h) && h != sisuHost) {
			continue // a pattern is one of the wildcards; the sign-in hosts take no XSTS token
		}
		if party := nsalParty(h); party != "" {
			eps = append(eps, entry(h, "fqdn", party))
		}
	}
	for _, d := range nsalDomains {
		eps = append(eps, entry(d.wildcard, "wildcard", d.party))
	}
	eps = append(eps, entry("xboxlive.com", "fqdn", "http://xboxlive.com"))
	slices.SortStableFunc(eps, func(a, b nsalEndpoint) int { return strings.Compare(a.HostType, b.HostType) }) // exact names first
	b, _ := json.Marshal(map[string]any{
		"EndPoints":         eps,
		"SignaturePolicies": []xblsign.Policy{xblsign.DefaultPolicy()},
		"Certs":             []any{},
		"RootCerts":         []string{},
	})
	return b
}
