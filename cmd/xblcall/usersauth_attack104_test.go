package main

import (
	"testing"
)

// The analyze package doc ("# What is judged"): calls are grouped per user
// "... so that a call that sends a token is never read as one without".
// A user polling profile once a second for 900 s with an XBL3.0 value
// that carries a token, spelt with a tab after the scheme or an upper-case
// "X=", must read red, exit 1, as with "XBL3.0 x=9;t".
// Broke before the fix: the lenient reading took a space and "x=" only.
func TestAttack104UsersAuthTabAndUpperX(t *testing.T) {
	for _, auth := range []string{
		"XBL3.0\tx=9;t",  // a tab where the space goes
		"XBL3.0 X=9;t",   // the parameter's name upper-cased
		"XBL3.0\t x=9;t", // a tab then a space
	} {
		code, rep := attack101JSON(t, attack102UsersHAR(t, auth))
		if code != 1 || rep.Verdict != "red" {
			t.Errorf("Authorization %q (an XBL3.0 value carrying the token \"t\"): analyze exit %d, verdict %s, byRule %v; "+
				"analyze/doc.go promises \"so that a call that sends a token is never read as one without\": want red, exit 1, as for \"XBL3.0 x=9;t\"",
				auth, code, rep.Verdict, rep.ByRule)
		}
	}
}

// held: odd spacing, scheme case, commas, a second XBL3.0 value after a
// comma, semicolons and a long token: each read as user 9's (or a
// digest's) calls: red, exit 1.
func TestAttack104UsersAuthOddSpellingsHeld(t *testing.T) {
	for _, auth := range []string{
		"xbl3.0 x=9;t", "XbL3.0 x=9;t", "XBL3.0    x=9;t", "  XBL3.0 x=9;t", "\tXBL3.0 x=9;t",
		"XBL3.0 x=9;t, XBL3.0 x=8;u", "XBL3.0 x=9;;t", "XBL3.0 x=9;t;u", "XBL3.0 x=9,8;t", "XBL3.0 x=9;\tt",
		"XBL3.0 x=9;" + "tttttttttttttttttttttttttttt",
	} {
		code, rep := attack101JSON(t, attack102UsersHAR(t, auth))
		if code != 1 || rep.Verdict != "red" {
			t.Errorf("Authorization %q: analyze exit %d, verdict %s, byRule %v; want red, exit 1", auth, code, rep.Verdict, rep.ByRule)
		}
	}
}

// held: analyze/har.go: an entry "that holds two Authorization ... headers
// (readers differ on which one counts) ... is skipped and named in
// Input.Problems": 900 polling calls each with a tokenless first
// Authorization ("Bearer") and an XBL3.0 second, or two XBL3.0 values of
// two users, never read green or exit 0 (the skipped calls fail closed).
func TestAttack104UsersAuthDuplicatedHeaderHeld(t *testing.T) {
	for _, pair := range [][2]string{
		{"Bearer abcdefgh", "XBL3.0 x=9;t"},
		{"XBL3.0 x=9;t", "XBL3.0 x=8;u"},
		{"authorization-less", "XBL3.0\tx=9;t"},
	} {
		var calls []map[string]any
		for i := range 900 {
			calls = append(calls, attack101Entry(float64(i), "https://profile.xboxlive.com/users/me/profile/settings", pair[0], 200, "",
				map[string]any{"reqHeaders": []map[string]string{{"name": "authorization", "value": pair[1]}}}))
		}
		code, rep := attack101JSON(t, harOf(t, calls))
		if code == 0 || rep.Verdict == "green" {
			t.Errorf("two Authorization headers %q: exit %d, verdict %s; want never green, non-zero exit", pair, code, rep.Verdict)
		}
	}
}
