package analyze

import "testing"

// TestHideOpaque: a reason quotes trace text, and a run of 24 or more bytes
// of the alphabets credentials use (not digits alone) is shown as its
// length; shorter runs, digits, and the text around them stay.
func TestHideOpaque(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"status 1e400 is not 0", "status 1e400 is not 0"},
		{"XBL3.0 x=123;eyJhbGciOiJSUzI1NiJ9SeCrEt is", "XBL3.0 x=123;[26 bytes hidden] is"},
		{"abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvw"},                           // 23
		{"abcdefghijklmnopqrstuvwx", "[24 bytes hidden]"},                                // 24
		{"253327479123456725332747912345672533", "253327479123456725332747912345672533"}, // digits alone
		{`"a.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX29mX3RoZV90b2tlbg"`, `"a.[27 bytes hidden].[30 bytes hidden]"`},
	} {
		if got := hideOpaque(tt.in); got != tt.want {
			t.Errorf("hideOpaque(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
