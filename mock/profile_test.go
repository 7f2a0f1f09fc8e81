package mock

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzProfileJSON: appendProfiles writes the profile service's answer as
// json.Marshal writes a profileResponse, byte for byte, whatever text its
// ids and values hold (HTML, control characters, invalid UTF-8, U+2028),
// for no user, one, two, and users with no settings.
func FuzzProfileJSON(f *testing.F) {
	f.Add("2533274791234567", "Gamertag", "Player4567", false, uint8(1))
	f.Add("1", "GameDisplayPicRaw", "https://images-eds-ssl.xboxlive.com/image?url=mock&format=png", true, uint8(2))
	f.Add("<\"\\>", "\b\f\n\r\t\x00\x1f\x7f", "é\u2028\u2029\xff", false, uint8(3))
	f.Fuzz(func(t *testing.T, id, setting, value string, sponsored bool, shape uint8) {
		u := profileUser{ID: id, HostID: value, Settings: []profileSetting{{setting, value}, {value, id}}, IsSponsoredUser: sponsored}
		var users []profileUser
		switch shape % 4 {
		case 1:
			users = []profileUser{}
		case 2:
			users = []profileUser{u}
		case 3:
			bare := u
			bare.Settings = nil
			users = []profileUser{u, bare, {Settings: []profileSetting{}}}
		}
		want, err := json.Marshal(profileResponse{users})
		if err != nil {
			t.Fatal(err)
		}
		if got := appendProfiles(nil, users); string(got) != string(want) {
			t.Errorf("appendProfiles(%+v)\n got %s\nwant %s", users, got, want)
		}
	})
}

// TestProfileAnswersAsMarshalled: the profile reads' answers, for the
// settings a client may ask (values with '&', none asked, unknown ids, a
// gamertag with HTML and non-ASCII text), are json.Marshal's encoding of
// the users profileOf gives.
func TestProfileAnswersAsMarshalled(t *testing.T) {
	h := NewHandler()
	h.world.setGamertag(xuid2, `<b>"Ünïcode"</b>`+"\u2028")
	tok := Token(xuid1, title1)
	tests := []struct {
		name, method, url, body string
		users                   []profileUser
	}{
		{"gamertag", "GET", "/users/me/profile/settings?settings=Gamertag", "",
			[]profileUser{h.world.profileOf(xuid1, []string{"Gamertag"}, nil)}},
		{"none asked", "GET", "/users/me/profile/settings", "", []profileUser{h.world.profileOf(xuid1, nil, nil)}},
		{"pictures and unknown ids", "GET", "/users/xuid(" + xuid2 + ")/profile/settings?settings=GameDisplayPicRaw,Nope,PreferredColor,GameDisplayName", "",
			[]profileUser{h.world.profileOf(xuid2, []string{"GameDisplayPicRaw", "Nope", "PreferredColor", "GameDisplayName"}, nil)}},
		{"batch", "POST", "/users/batch/profile/settings", `{"userIds":["` + xuid1 + `",` + xuid2 + `],"settings":["Gamertag","Bio"]}`,
			[]profileUser{h.world.profileOf(xuid1, []string{"Gamertag", "Bio"}, nil), h.world.profileOf(xuid2, []string{"Gamertag", "Bio"}, nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, tt.method, "https://profile.xboxlive.com"+tt.url, tok, tt.body)
			want, err := json.Marshal(profileResponse{tt.users})
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusOK || r.body != string(want) {
				t.Errorf("%s %s: %d\n got %s\nwant %s", tt.method, tt.url, r.status, r.body, want)
			}
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestProfileSettingIDsWithoutCase: the service compares setting ids
// without case, Unicode's too (strings.ToLower: the Kelvin sign is a k),
// and answers each with the id as asked.
func TestProfileSettingIDsWithoutCase(t *testing.T) {
	w := NewHandler().world
	got := w.profileOf(xuid1, []string{"GAMERTAG", "gamerScore", "WATERMAR\u212aS", "AccountTier", "Gamertag\u0130", "x"}, nil)
	want := profileUser{ID: xuid1, HostID: xuid1, Settings: []profileSetting{
		{"GAMERTAG", w.gamertagOf(xuid1)}, {"gamerScore", strconv.Itoa(w.gamerscoreOf(xuid1))}, {"WATERMAR\u212aS", ""}, {"AccountTier", w.tierOf(xuid1)}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profileOf mismatch (-want +got):\n%s", diff)
	}
}

// TestProfileReadsBounded: a profile read names at most
// maxProfileSettings settings, or is refused with 400, so that an answer
// is bounded in bytes by its users: each setting is answered for every
// user of a read, and a 1 MiB batch naming "Bio" 174,000 times for 100
// users was a 419 MB answer (4.4 GB allocated, 7 s).
func TestProfileReadsBounded(t *testing.T) {
	h := NewHandler()
	h.world.setGamertag(xuid1, "Bounded")
	tok := Token(xuid1, title1)
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = `"` + strconv.Itoa(2533274790000000+i) + `"`
	}
	batch := func(settings []string) string {
		return `{"userIds":[` + strings.Join(ids, ",") + `],"settings":["` + strings.Join(settings, `","`) + `"]}`
	}
	most := slices.Repeat([]string{"GameDisplayPicRaw"}, maxProfileSettings)
	tests := []struct {
		name, method, url, body string
		status                  int
	}{
		{"most settings, a user", "GET", "/users/me/profile/settings?settings=" + strings.Join(most, ","), "", http.StatusOK},
		{"most settings, a batch", "POST", "/users/batch/profile/settings", batch(most), http.StatusOK},
		{"most settings, people", "GET", "/users/me/profile/settings/people/people?settings=" + strings.Join(most, ","), "", http.StatusOK},
		{"one more, a user", "GET", "/users/me/profile/settings?settings=Bio," + strings.Join(most, ","), "", http.StatusBadRequest},
		{"one more, by gamertag", "GET", "/users/gt(Bounded)/profile/settings?settings=Bio," + strings.Join(most, ","), "", http.StatusBadRequest},
		{"one more, people", "GET", "/users/me/profile/settings/people/people?settings=Bio," + strings.Join(most, ","), "", http.StatusBadRequest},
		{"one more, a batch", "POST", "/users/batch/profile/settings", batch(append([]string{"Bio"}, most...)), http.StatusBadRequest},
		{"a 1 MiB batch", "POST", "/users/batch/profile/settings", batch(slices.Repeat([]string{"Bio"}, 174_000)), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, h, tt.method, "https://profile.xboxlive.com"+tt.url, tok, tt.body)
			if r.status != tt.status {
				t.Fatalf("%s %.80s: %d %.200s, want %d", tt.method, tt.url, r.status, r.body, tt.status)
			}
			// The largest: 100 users' 100 settings of 104 bytes each.
			if len(r.body) > 1_100_000 {
				t.Errorf("%s %.80s: an answer of %d bytes, want at most 1.1 MB", tt.method, tt.url, len(r.body))
			}
			h.ResetCounts(t.Context(), nil)
		})
	}
}
