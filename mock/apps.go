package mock

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// WorldApp is an application registered with the sign-in services: the
// redirect URIs login.live.com and the identity platform send its codes
// to. A redirect URI is compared whole and exactly, as the services
// compare it.
type WorldApp struct {
	// ClientID is the application's client ID (compared without case): 16
	// hex digits for a Microsoft account application, a GUID for an Azure
	// one.
	ClientID     string   `json:"clientId"`
	RedirectURIs []string `json:"redirectUris"`
}

// PublishedApps returns the applications the mock's sign-in knows without
// a world naming any: the Xbox client IDs that published clients sign in
// with, and the redirect URIs those clients use. A World's app of the same
// client ID replaces one. Every client may also be sent to a loopback
// address (loopbackRedirect).
func PublishedApps() []WorldApp {
	const desktop = "https://login.live.com/oauth20_desktop.srf"
	return []WorldApp{
		// The Xbox app: @xboxreplay/xboxlive-auth 5.1.0's default client
		// (dist/shared/libs/live/config.js), and the XAL redirect of
		// OpenXbox/xbox-webapi-python (xbox/webapi/authentication/xal.py).
		{ClientID: "000000004C12AE6F", RedirectURIs: []string{desktop, "ms-xal-000000004c12ae6f://auth"}},
		// The Xbox app's beta, Game Pass and its beta, and family settings
		// (xal.py's APP_PARAMS_*).
		{ClientID: "000000004415494B", RedirectURIs: []string{"ms-xal-000000004415494b://auth"}},
		{ClientID: "000000004C20A908", RedirectURIs: []string{"ms-xal-000000004c20a908://auth", "ms-xal-public-beta-000000004c20a908://auth"}},
		{ClientID: "00000000482C8F49", RedirectURIs: []string{desktop}},
		// My Xbox Live: xbox-webapi-python's browser sign-in of old
		// (README.md, "xbox-auth-via-browser").
		{ClientID: "0000000048093EE3", RedirectURIs: []string{desktop}},
	}
}

// Bounds of a World's apps.
const (
	maxApps         = 1000
	maxRedirectURIs = 64
	maxRedirectURI  = 2048
	maxClientID     = 128
)

// indexApps returns the redirect URIs registered for each client ID (in
// lower case): the published apps', replaced by those of apps.
func indexApps(apps []WorldApp) map[string][]string {
	m := map[string][]string{}
	for _, a := range slices.Concat(PublishedApps(), apps) {
		m[strings.ToLower(a.ClientID)] = a.RedirectURIs
	}
	return m
}

// redirectTo returns the redirect URI raw, parsed, when a code for
// clientID may be sent there: one registered for it (World.Apps,
// PublishedApps), compared exactly, or a loopback one.
func (w *world) redirectTo(clientID, raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || strings.Contains(raw, "#") || u.Scheme == "" {
		return nil, false
	}
	if slices.Contains(w.ix.Load().apps[strings.ToLower(clientID)], raw) {
		return u, true
	}
	return u, loopbackRedirect(u)
}

// loopbackRedirect reports whether u is a loopback address over plain
// http (localhost, 127.0.0.1 or [::1]), at any port and path. A native
// application is sent to one at whatever port it listens on (RFC 8252
// §7.3: the server must allow any port; the Microsoft identity platform's
// "Redirect URI (reply URL) restrictions" make the localhost exceptions to
// https). The real services want the application to have registered such
// an address; the mock lets every client be sent to one, so that a test's
// own client ID needs no world.
func loopbackRedirect(u *url.URL) bool {
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return u.Scheme == "http" && u.User == nil && u.Opaque == ""
	}
	return false
}

// checkApps reports the first thing wrong with a World's apps, as a
// *datafile.Error.
func checkApps(apps []WorldApp) error {
	if len(apps) > maxApps {
		return worldError("apps", fmt.Sprintf("more than %d apps", maxApps))
	}
	where := make(map[string]int, len(apps))
	for i, a := range apps {
		f := fmt.Sprintf("apps[%d]", i)
		id := strings.ToLower(a.ClientID)
		if a.ClientID == "" || len(a.ClientID) > maxClientID || strings.IndexFunc(a.ClientID, func(r rune) bool { return !unicode.IsPrint(r) || r == ' ' }) >= 0 {
			return worldError(f+".clientId", fmt.Sprintf("a client ID is 1 to %d printable characters, no space", maxClientID))
		}
		if j, dup := where[id]; dup {
			return worldError(f+".clientId", fmt.Sprintf("apps[%d] has the same client ID", j))
		}
		where[id] = i
		if len(a.RedirectURIs) == 0 || len(a.RedirectURIs) > maxRedirectURIs {
			return worldError(f+".redirectUris", fmt.Sprintf("1 to %d redirect URIs", maxRedirectURIs))
		}
		for j, r := range a.RedirectURIs {
			if u, err := url.Parse(r); err != nil || u.Scheme == "" || strings.Contains(r, "#") || len(r) > maxRedirectURI {
				return worldError(fmt.Sprintf("%s.redirectUris[%d]", f, j),
					fmt.Sprintf("not an absolute URI without a fragment, of at most %d bytes", maxRedirectURI))
			}
		}
	}
	return nil
}
