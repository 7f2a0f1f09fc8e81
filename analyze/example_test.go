package analyze_test

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// get sends a GET as the mock's user 2533274791234567 and drains the answer.
func get(c *http.Client, url string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", mock.Token("2533274791234567", "1234567890"))
	if resp, err := c.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// A title's Go test records what reaches the service (the Recorder sits
// under the fgrl transport, over the mock) and asserts the trace passes; a
// client that ignores 429s does not.
func Example() {
	const profile = "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag"
	rec := &analyze.Recorder{Base: mock.NewHandler()}
	game := &http.Client{Transport: &transport.Transport{Base: rec}}
	get(game, profile)
	get(game, "https://social.xboxlive.com/users/me/people")
	get(game, "https://userpresence.xboxlive.com/users/me")
	rep, _ := analyze.Analyze(rec.Calls(), nil, nil)
	fmt.Println("fgrl:", rep.Verdict, rep.Judged, "calls")

	naive := &analyze.Recorder{Base: mock.NewHandler()}
	for i := 0; i < 12; i++ { // profile allows 10 per 15 s
		get(&http.Client{Transport: naive}, fmt.Sprintf("%s&n=%d", profile, i))
	}
	rep, _ = analyze.Analyze(naive.Calls(), nil, nil)
	fmt.Println("naive:", rep.Verdict)
	for _, f := range rep.Findings {
		if f.Level == analyze.Fail {
			fmt.Println(f.Rule+":", f.Reason)
		}
	}
	// Output:
	// fgrl: green 3 calls
	// naive: red
	// throttled-calls: 2 429s in a row: the title does not back off after a 429
	// throttled-calls: 1 call sent before the 429's Retry-After of 15s passed
}

// TestTransportTrafficPasses: a minute of a game asking for its profile 4
// times a second through the fgrl transport, in a synctest bubble. The
// transport waits out the budget, so the service never answers 429 and no
// finding fails (bursts of the 10 calls a window allows still warn).
func TestTransportTrafficPasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &analyze.Recorder{Base: mock.NewHandler()}
		game := &http.Client{Transport: &transport.Transport{Base: rec}}
		for i := 0; i < 240; i++ {
			get(game, fmt.Sprintf("https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&n=%d", i))
		}
		rep, err := analyze.Analyze(rec.Calls(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for r := range rep.ByRule {
			rules = append(rules, r)
		}
		sort.Strings(rules)
		if rep.Verdict == analyze.Red || rep.Groups[0].Server429s != 0 {
			t.Errorf("verdict %s with %d 429s; rules %v", rep.Verdict, rep.Groups[0].Server429s, rules)
		}
	})
}
