package mocktest_test

import (
	"fmt"
	"net/http"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/mock/mocktest"
)

// A test fails when the code under test was throttled: here a loop that
// calls profile eleven times in a burst, past its limit of ten in 15 s.
func ExampleNoThrottled() {
	h := mock.NewHandler()
	for range 11 {
		req, _ := http.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", mock.Token("2533274790000001", "1234567890"))
		if resp, err := h.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}
	var t recorder // stands for the test's *testing.T
	mocktest.NoThrottled(&t, h)
	fmt.Println(len(t.failures), "failure, it begins:", t.failures[0][:44])
	// Output:
	// 1 failure, it begins: mock check failed:
	// 	429: GET https://profile
}
