package client

import "testing"

// TestContractVersion: ContractVersion answers the contract each typed
// call sends, by host and, for leaderboards, by path; a host no typed call
// goes to is not found.
func TestContractVersion(t *testing.T) {
	tests := []struct {
		name, host, path, want string
		found                  bool
	}{
		{"profile", "profile.xboxlive.com", "/users/me/profile/settings", profileAPI.contract, true},
		{"host case", "PROFILE.xboxlive.com", "/users/me/profile/settings", profileAPI.contract, true},
		{"event leaderboard", "leaderboards.xboxlive.com", "/scids/x/leaderboards/kills", leaderboardAPI.contract, true},
		{"stat leaderboard", "leaderboards.xboxlive.com", "/scids/x/leaderboards/stat(kills)", statLeaderboardAPI.contract, true},
		{"sessions", "sessiondirectory.xboxlive.com", "/handles", mpsdAPI.contract, true},
		{"unknown host", "example.com", "/", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := ContractVersion(tt.host, tt.path)
			if got != tt.want || found != tt.found {
				t.Errorf("ContractVersion(%q, %q) = %q, %v; want %q, %v", tt.host, tt.path, got, found, tt.want, tt.found)
			}
		})
	}
	for _, a := range typedAPIs() {
		path := "/"
		if a.pathHas != "" {
			path = a.pathHas + "x)"
		}
		if got, _ := ContractVersion(a.host, path); got != a.contract {
			t.Errorf("%s %s: ContractVersion %q, the call sends %q", a.service, a.host, got, a.contract)
		}
	}
}
