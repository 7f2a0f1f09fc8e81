package client

import (
	"strings"
)

// ContractVersion returns the x-xbl-contract-version the typed calls send
// in a request to host at path (an escaped path such as
// "/users/me/profile/settings"), and whether any typed call goes to host.
// It is the one source of contract versions: xblcall call sends it when
// given no x-xbl-contract-version, and docs/CLIENT.md's table lists it.
func ContractVersion(host, path string) (string, bool) {
	host = strings.ToLower(host)
	version, found := "", false
	for _, a := range typedAPIs() {
		if a.host != host {
			continue
		}
		if a.pathHas != "" && strings.Contains(path, a.pathHas) {
			return a.contract, true
		}
		if a.pathHas == "" && !found {
			version, found = a.contract, true
		}
	}
	return version, found
}

// typedAPIs are the APIs of every typed call.
func typedAPIs() []api {
	return []api{profileAPI, presenceAPI, presenceWriteAPI, socialAPI, privacyAPI, achievementsAPI, statsAPI,
		leaderboardAPI, statLeaderboardAPI, mpsdAPI, smartmatchAPI, reputationAPI, peoplehubAPI, titlehubAPI, usersearchAPI}
}
