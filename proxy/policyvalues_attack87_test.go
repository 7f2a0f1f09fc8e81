package proxy

import (
	"io"
	"net/http"
	"testing"

	"github.com/xblgo/fgrl/mock"
)

// held: hostile policy header values, in a raw HTTP/1.1 request in a
// tunnel, are refused 400 and nothing reaches the service. The doc:
// "HeaderMaxWait ... 0s to 5m", "A header given twice, a value out of its
// bounds ... is a *PolicyError", "the proxy answers it 400 with the
// error's text, sending nothing".
func TestAttack87HostilePolicyValuesRefused(t *testing.T) {
	var count *attack87CountingRT
	f := serve(t, func(c *Config) {
		count = &attack87CountingRT{base: c.Transport.Base}
		c.Transport.Base = count
	})
	for _, extra := range []string{
		"Fgrl-Max-Wait: -1s\r\n",
		"Fgrl-Max-Wait: 2562047h\r\n",
		"Fgrl-Max-Wait: 5m0.000000001s\r\n",
		"Fgrl-Max-Wait: 30\r\n",
		"Fgrl-Max-Wait: NaN\r\n",
		"Fgrl-Attempt-Timeout: 1h\r\n",
		"Fgrl-Max-Wait: 1s\r\nFGRL-MAX-WAIT: 2s\r\n",
		"fgrl-fail-fast: true\r\nFgrl-Fail-Fast: false\r\n",
		"Fgrl-Fail-Fast: yes\r\n",
		"Fgrl-Priority: urgent\r\n",
		"Fgrl-Rule: no-such/rule\r\n",
		"Fgrl-Unknown: 1\r\n",
	} {
		tc, br := pxAtkTunnel(t, f, "profile.xboxlive.com")
		io.WriteString(tc, "GET /users/me/profile/settings?settings=Gamertag HTTP/1.1\r\nHost: profile.xboxlive.com\r\n"+
			"Authorization: "+mock.Token(xuid1, title)+"\r\nx-xbl-contract-version: 3\r\n"+extra+"\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", extra, err)
		}
		io.Copy(io.Discard, resp.Body)
		tc.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", extra, resp.StatusCode)
		}
	}
	if n := count.n.Load(); n != 0 {
		t.Errorf("%d calls with a bad policy header reached the service, want 0", n)
	}
}
