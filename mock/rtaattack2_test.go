package mock

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
)

// TestAttackRTAResourceSchemeIsHTTPOrHTTPS: RELIABILITY.md promises "a
// resource URI's scheme must be http or https, as XSAPI builds it, so it
// can hold nothing else", and rtawire.go "The scheme (http or https) and
// the host's case do not matter". strings.EqualFold folds Unicode: the
// long s (U+017F) folds to 's', so "httpſ" passes for "https"; and
// strings.ToLower maps U+0130 (İ) and U+212A (Kelvin K) to ASCII, so a
// host that is not the service's name in any ASCII case passes too. Such
// a URI is no URI XSAPI builds, and is kept as sent in the record.
func TestAttackRTAResourceSchemeIsHTTPOrHTTPS(t *testing.T) {
	for _, uri := range []string{
		"httpſ://userpresence.xboxlive.com/users/xuid(1)/devices",
		"https://userpresence.xboxlİve.com/users/xuid(1)/devices",
		"https://socİal.xboxlİve.com/users/xuid(1)/devices",
		"https://sessİondİrectory.xboxlİve.com/connections/",
	} {
		if got, ok := parseRTAResource(uri); ok {
			t.Errorf("parseRTAResource(%q) = %+v, true; want refused: not http(s) and an ASCII host as XSAPI builds it", uri, got)
		}
	}
}

// TestAttackRTARecordKeepsNonXSAPIURI: the same over the wire: a subscribe to
// "httpſ://..." is answered as a known resource, and the record keeps the
// client's non-ASCII text as sent ("a subscribe to a resource it knows
// with its URI ... so it can hold nothing else").
func TestAttackRTARecordKeepsNonXSAPIURI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		ws := dialRTA(t, pipeServer(t, h), xuid1)
		uri := "httpſ://userpresence.xboxlİve.com/users/xuid(" + xuid1 + ")/devices"
		code, _, _ := subscribe(t, ws, 1, uri)
		if code == 0 {
			ws.CloseNow()
			synctest.Wait()
			b, _ := json.Marshal(h.Calls(CallFilter{}))
			t.Errorf("a subscribe to %q answered 0 (a known resource); the record holds the client's text: %v",
				uri, strings.Contains(string(b), "ſ") || strings.Contains(string(b), `\u017f`))
		}
	})
}

// TestAttackRTAUnsubscribeOfAnotherConnectionsID: subscription ids are
// global on the mock; one user's connection unsubscribing another's id
// must not end it ("A user sees their own resources"; an unsubscribe of a
// subscription the connection does not hold is answered UnknownResource).
func TestAttackRTAUnsubscribeOfAnotherConnectionsID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := rtaHandler(t)
		hc := pipeServer(t, h)
		a := dialRTA(t, hc, xuid2)
		b := dialRTA(t, hc, xuid3)
		code, sub, _ := subscribe(t, a, 1, devicesURI(xuid1))
		if code != 0 {
			t.Fatalf("friend subscribe: %d", code)
		}
		// the stranger guesses the id, and a range around it
		for i, s := range []int{sub, sub - 1, sub + 1} {
			write(t, b, `[2,`+jsonNum(i+1)+`,`+jsonNum(s)+`]`)
			ans := read(t, b)
			if len(ans) != 3 || string(ans[2]) != "1" {
				t.Errorf("stranger's unsubscribe of %d: %s, want code 1", s, ans)
			}
		}
		do(t, h, "POST", "https://userpresence.xboxlive.com/users/me/devices/current/titles/current", Token(xuid1, title1), `{"state":"active"}`)
		ev := read(t, a)
		if string(ev[0]) != "3" || string(ev[1]) != jsonNum(sub) {
			t.Errorf("after a stranger's unsubscribes, friend's event: %s", ev)
		}
		// and the stranger never hears xuid1's presence
		code, _, _ = subscribe(t, b, 9, devicesURI(xuid1))
		if code != 3 {
			t.Errorf("stranger subscribe to xuid1's devices: code %d, want 3", code)
		}
	})
}
