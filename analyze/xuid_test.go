package analyze

import (
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// TestXboxUserIdSpacing: a data file names the user of a call without an
// Authorization header by its XboxUserId. The same XUID written with a
// space or tab around it (a hand-edited or re-exported CSV, a JSON value)
// is the same user: its calls must be judged under that user, not become
// calls without a token (which no user's limits count: one user split
// in two, its burst unseen). Before, only the exact spelling was the user.
func TestXboxUserIdSpacing(t *testing.T) {
	const xuid = "2533274791234567"
	for _, user := range []string{xuid, " " + xuid, xuid + " ", "\t" + xuid, " " + xuid + "\t"} {
		csv := csvHdr + strings.Replace(csvLine(0, 200), `"1","",`, `"`+user+`","",`, 1)
		var got []string
		if _, err := ReadData(strings.NewReader(csv), func(c *Call) {
			uhs, _, err := xblauth.Parse(c.Authorization)
			if err != nil {
				uhs = "no token (" + err.Error() + ")"
			}
			got = append(got, uhs)
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != xuid {
			t.Errorf("XboxUserId %q: the call's user is %q, want %s", user, got, xuid)
		}
	}
	// A value holding a ';' is no XUID: read as a userhash it was cut at the
	// ';', so "X;a" and "X;b" were both user X's calls.
	for _, user := range []string{xuid + ";a", xuid + ";REDACTED"} {
		csv := csvHdr + strings.Replace(csvLine(0, 200), `"1","",`, `"`+user+`","",`, 1)
		if _, err := ReadData(strings.NewReader(csv), func(c *Call) {
			if uhs, _, err := xblauth.Parse(c.Authorization); err == nil && uhs == xuid {
				t.Errorf("XboxUserId %q: the call is user %s's", user, xuid)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
}
