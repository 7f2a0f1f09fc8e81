package analyze

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAPIMap: calls as traces hold them name the XSAPI functions the trace
// analyzer's map gives for their endpoint (data/apimap.json); a host the
// map knows without the endpoint names its service; any other host nothing.
func TestAPIMap(t *testing.T) {
	m := loadAPIMap()
	if len(m.names) < 80 {
		t.Fatalf("the map holds %d endpoints, want the trace analyzer's (about 90)", len(m.names))
	}
	for _, tc := range []struct {
		method, host, path string
		want               []string
	}{
		{"POST", "profile.xboxlive.com", "/users/batch/profile/settings", []string{"XblProfileGetUserProfile(s)Async (profile_service::get_user_profile(s))"}},
		{"GET", "userpresence.xboxlive.com", "/users/xuid(2533274791234567)", []string{"XblPresenceGetPresenceAsync (presence_service::get_presence)"}},
		{"get", "USERPRESENCE.xboxlive.com", "/users/xuid(2533274791234567)/", []string{"XblPresenceGetPresenceAsync (presence_service::get_presence)"}},
		{"GET", "titlestorage.xboxlive.com", "/json/users/xuid(1)/scids/abc/data/saves/slot1.json,json", []string{"XblTitleStorageDownloadBlobAsync (title_storage_service::download_blob)"}},
		{"PUT", "sessiondirectory.xboxlive.com", "/serviceconfigs/abc/sessiontemplates/lobby/sessions/s1", []string{"XblMultiplayerWriteSessionAsync (multiplayer_service::write_session)"}},
		{"GET", "achievements.xboxlive.com", "/users/xuid(1)/achievements", []string{
			"XblAchievementsGetAchievementsForTitleIdAsync (achievement_service::get_achievements_for_title_id)",
			"XblAchievementsResultGetNextAsync (achievements_result::get_next)"}},
		{"GET", "profile.xboxlive.com", "/users/me/profile/settings", []string{"XblProfile*"}},
		{"GET", "clubhub.xboxlive.com", "/nowhere", []string{"clubs_service::*"}},
		{"GET", "example.com", "/users/batch", nil},
	} {
		t.Run(tc.method+" "+tc.host+tc.path, func(t *testing.T) {
			var ids []int16
			if id := m.endpointOf(tc.method, tc.host, tc.path); id >= 0 {
				ids = append(ids, int16(id))
			}
			if diff := cmp.Diff(tc.want, m.apisOf(ids, tc.host)); diff != "" {
				t.Errorf("APIs (-want +got):\n%s", diff)
			}
		})
	}
}
