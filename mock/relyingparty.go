package mock

import (
	"fmt"
	"slices"
	"strings"
)

// WorldRelyingParty is a relying party the world's XSTS issues tokens for
// beyond the Xbox services' own: a title service's, as Partner Center
// configures one ("Title service calls to Xbox services", Delegated S2S
// configuration).
type WorldRelyingParty struct {
	// Name is the relying party as requests name it; a custom one ends in
	// a slash ("rp://game.example/", "https://game.example/").
	Name string `json:"name"`
	// Delegation puts the DelegationToken claim in a user's XSTS answer
	// for this relying party, so that the title service can get X-tokens
	// on the user's behalf.
	Delegation bool `json:"delegation,omitempty"`
}

// MockServiceRelyingParty is the title service relying party every mock
// knows, configured for delegation: what a backend's integration test
// uses without a world of its own (PublishedRelyingParties).
const MockServiceRelyingParty = "rp://fgrl-mock-service/"

// xboxRelyingParties are the Xbox services' relying parties, which XSTS
// issues service-auth and delegated X-tokens for ("Title service calls to
// Xbox services", The RelyingParty property; its request samples name
// https://xboxlive.com).
var xboxRelyingParties = []string{"http://xboxlive.com", "https://xboxlive.com", "http://licensing.xboxlive.com",
	"http://music.xboxlive.com", "http://accounts.xboxlive.com"}

// PublishedRelyingParties returns the relying parties every mock knows
// besides the Xbox services' own: MockServiceRelyingParty, for delegation.
func PublishedRelyingParties() []WorldRelyingParty {
	return []WorldRelyingParty{{Name: MockServiceRelyingParty, Delegation: true}}
}

// Bounds of a World's relying parties: each name is part of the tokens
// minted for it.
const (
	maxRelyingParties   = 100
	maxRelyingPartyName = 100
)

// relyingParty returns what the world says of the relying party name: an
// Xbox one, one of the world's (World.RelyingParties, else
// PublishedRelyingParties), or none (ok false).
func (w *world) relyingParty(name string) (rp WorldRelyingParty, ok bool) {
	if slices.Contains(xboxRelyingParties, name) {
		return WorldRelyingParty{Name: name}, true
	}
	rps := w.ix.Load().src.RelyingParties
	if rps == nil {
		rps = PublishedRelyingParties()
	}
	i := slices.IndexFunc(rps, func(r WorldRelyingParty) bool { return r.Name == name })
	if i < 0 {
		return WorldRelyingParty{}, false
	}
	return rps[i], true
}

// checkRelyingParties reports the first thing wrong with a World's relying
// parties, as a *datafile.Error of field "relyingParties[i].name".
func checkRelyingParties(rps []WorldRelyingParty) error {
	if len(rps) > maxRelyingParties {
		return worldError("relyingParties", fmt.Sprintf("more than %d relying parties", maxRelyingParties))
	}
	seen := make(map[string]int, len(rps))
	for i, r := range rps {
		f := fmt.Sprintf("relyingParties[%d].name", i)
		switch {
		case r.Name == "" || len(r.Name) > maxRelyingPartyName || strings.ContainsFunc(r.Name, func(c rune) bool { return c <= ' ' || c > '~' }):
			return worldError(f, fmt.Sprintf("not a relying party name of 1 to %d printable ASCII characters", maxRelyingPartyName))
		case slices.Contains(xboxRelyingParties, r.Name):
			return worldError(f, "an Xbox services relying party is not the world's to configure")
		}
		if j, ok := seen[r.Name]; ok {
			return worldError(f, fmt.Sprintf("relyingParties[%d] has the same name", j))
		}
		seen[r.Name] = i
	}
	return nil
}
