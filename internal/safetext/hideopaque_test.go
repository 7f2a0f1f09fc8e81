package safetext

import "testing"

// TestHideOpaque: a run of 24 or more bytes of the alphabets credentials
// use, holding a letter and a digit, is shown as its length; shorter runs,
// letters alone, digits alone and the text around them stay.
func TestHideOpaque(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"status 1e400 is not 0", "status 1e400 is not 0"},
		{"XBL3.0 x=123;eyJhbGciOiJSUzI1NiJ9SeCrEt is", "XBL3.0 x=123;[26 bytes hidden] is"},
		{"abcdefghijklmnopqrstuv1", "abcdefghijklmnopqrstuv1"},                           // 23
		{"abcdefghijklmnopqrstuvw1", "[24 bytes hidden]"},                                // 24
		{"1abcdefghijklmnopqrstuvw", "[24 bytes hidden]"},                                // the digit first
		{"abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"},                     // letters alone
		{"MultiplayerCorrelationId", "MultiplayerCorrelationId"},                         // a name
		{"253327479123456725332747912345672533", "253327479123456725332747912345672533"}, // digits alone
		{"a-b_c+d/e=f0123456789012345678", "[30 bytes hidden]"},                          // every byte of the alphabet
		{"x abcdefghijkl0mnopqrstuvwxy.z", "x [26 bytes hidden].z"},
		{`"a.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlX29mX3RoZV90b2tlbg"`, `"a.[27 bytes hidden].[30 bytes hidden]"`},
		{"abc0defghijklmnopqrstuvwxy!abc0defghijklmnopqrstuvwxy", "[26 bytes hidden]![26 bytes hidden]"},
		{"a sentence of plain words, long enough, then a1b2", "a sentence of plain words, long enough, then a1b2"}, // a short run late in the text
		{"A000000000000000000000000", "[25 bytes hidden]"},                                                         // 'A' the one letter
		{"Z000000000000000000000000 z000000000000000000000000", "[25 bytes hidden] [25 bytes hidden]"},
	} {
		if got := HideOpaque(tt.in); got != tt.want {
			t.Errorf("HideOpaque(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestHideOpaqueNoAllocation: text with nothing to hide comes back as it is,
// with no allocation.
func TestHideOpaqueNoAllocation(t *testing.T) {
	s := "HttpStatusCode: not a number at line 12"
	if n := testing.AllocsPerRun(100, func() { _ = HideOpaque(s) }); n != 0 {
		t.Errorf("%v allocations for text with nothing to hide", n)
	}
}
