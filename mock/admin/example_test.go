package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/admin"
)

// A test suite in any language reads the mock's counts through its admin
// API, served beside the services on one address.
func ExampleWithServices() {
	h := mock.NewHandler()
	srv := httptest.NewServer(admin.WithServices(h, admin.Config{})) // loopback peers only
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/users/me/profile/settings?settings=Gamertag", nil)
	req.Host = "profile.xboxlive.com"
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	if resp, err := srv.Client().Do(req); err == nil {
		resp.Body.Close()
	}
	resp, err := srv.Client().Get(srv.URL + "/_fgrl/api/keys?xuid=2533274791234567&title=1234567890&scope=profile")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var k mock.KeyCounts
	json.NewDecoder(resp.Body).Decode(&k)
	fmt.Println(k.Scope, k.Burst.Count, "of", k.Burst.Limit, "in the burst window;", k.Sustain.Count, "of", k.Sustain.Limit, "in the sustain window")
	// Output: profile 1 of 10 in the burst window; 1 of 30 in the sustain window
}
