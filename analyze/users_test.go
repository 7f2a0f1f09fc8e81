package analyze

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const secretUserhash = "eyJhbGciOiJSUzI1NiJ9SECRETuserhash"

func TestUserKey(t *testing.T) {
	for _, uhs := range []string{"9", "12345678901234567890"} {
		if got := userKey(uhs); got != uhs {
			t.Errorf("userKey(%q) = %q, want the userhash", uhs, got)
		}
	}
	for _, uhs := range []string{"abc", "9a", "123456789012345678901", secretUserhash, "#0123"} {
		got := userKey(uhs)
		if !isUserDigest(got) || strings.Contains(got, uhs) {
			t.Errorf("userKey(%q) = %q, want '#' and 16 hex digits", uhs, got)
		}
		if again := userKey(got); again != got {
			t.Errorf("userKey(%q) = %q, then %q", uhs, got, again)
		}
	}
}

func TestRedactAuth(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"XBL3.0 x=123;secret", "XBL3.0 x=123;REDACTED"},
		{"XBL3.0 x=" + secretUserhash + ";secret", "XBL3.0 x=" + userKey(secretUserhash) + ";REDACTED"},
		{"XBL3.0 x=" + userKey("abc") + ";REDACTED", "XBL3.0 x=" + userKey("abc") + ";REDACTED"},
		{"Bearer secret", "REDACTED"},
	} {
		if got := redactAuth(tt.in); got != tt.want {
			t.Errorf("redactAuth(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A userhash that is not one groups its calls as one user's, named by its
// digest, whether the call was read from a trace (redacted) or added as
// sent; the report never holds it.
func TestUserhashNotOneIsOneUser(t *testing.T) {
	const url = "https://profile.xboxlive.com/users/me/profile/settings"
	var tr trace
	for i := range 20 {
		tr.add(float64(i), "GET", url, secretUserhash, 200)
		tr = append(tr, Call{Time: at(float64(i) + 0.25), Method: "GET", URL: url, Authorization: redactAuth("XBL3.0 x=" + secretUserhash + ";t"), Status: 200})
		tr.add(float64(i)+0.5, "GET", url, "9a", 200)
	}
	rep := tr.report(t)
	got := map[string]int{}
	for _, g := range rep.Groups {
		got[g.Userhash] += g.Calls
	}
	want := map[string]int{userKey(secretUserhash): 40, userKey("9a"): 20}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls per user (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), secretUserhash) {
		t.Error("the report holds the userhash that is not one")
	}
}
