package mock

import (
	"strings"
	"testing"
)

// A second outside attack on the mock's services (2026-12-05): MPSD,
// SmartMatch and reputation writes with hostile bodies.

const mpsdAtkSessions = "https://sessiondirectory.xboxlive.com"

func mpsdAtkSessionURL(scid, name string) string {
	return mpsdAtkSessions + "/serviceconfigs/" + scid + "/sessiontemplates/quick/sessions/" + name
}

// mpsdAtkSeed makes title 1's session "mk2" with user 1 in it and a
// custom property only its members should see.
func mpsdAtkSeed(t *testing.T, h *Handler) string {
	t.Helper()
	url := mpsdAtkSessionURL(SCID(title1), "mk2")
	r := do(t, h, "PUT", url, Token(xuid1, title1),
		`{"properties":{"custom":{"lobbySecret":"TITLE1-ONLY"}},"members":{"me":{"properties":{"custom":{"loadout":"mine"}}}}}`)
	if r.status != 201 {
		t.Fatalf("title 1's user creates its session: %d %s", r.status, r.body)
	}
	return url
}

// TestAttackMPSDHostileBodiesNeverPanic (held): odd JSON at every MPSD,
// SmartMatch and reputation write, and odd search filters, answer without
// a panic and with no 5xx.
func TestAttackMPSDHostileBodiesNeverPanic(t *testing.T) {
	h := NewHandler()
	url := mpsdAtkSeed(t, h)
	tok := Token(xuid1, title1)
	ref := `{"scid":"` + SCID(title1) + `","templateName":"quick","name":"mk2"}`
	bodies := []string{`null`, `[]`, `"x"`, `1e999`, `{}`, `{"members":null}`, `{"members":{"me":null}}`,
		`{"members":{"me":[]}}`, `{"members":{"me":{"constants":{"system":null}}}}`, `{"members":{"me":{"constants":{"system":"x"}}}}`,
		`{"members":{"me":{"constants":null,"properties":null,"roles":null}}}`, `{"members":{"":{}}}`, `{"members":{"-1":{}}}`,
		`{"properties":null}`, `{"properties":{"system":null,"custom":null}}`, `{"properties":{"system":[]}}`,
		`{"constants":null}`, `{"constants":{"system":{"maxMembersCount":"x"}}}`,
		`{"type":"search","version":1,"sessionRef":null}`, `{"type":"search","version":1,"sessionRef":` + ref + `,"searchAttributes":null}`,
		`{"type":"search","version":1,"sessionRef":` + ref + `,"searchAttributes":{"tags":[null],"strings":{"a":null},"numbers":{"n":null}}}`,
		`{"type":"invite","version":1,"sessionRef":` + ref + `,"invitedXuid":"5","inviteAttributes":null}`,
		`{"type":"invite","version":1,"sessionRef":` + ref + `,"invitedXuid":"5","inviteAttributes":{"titleId":null}}`,
		`{"type":null}`, `{"type":"search","scid":"x","templateName":"quick","filter":null,"orderBy":null}`,
		`{"giveUpDuration":null,"preserveSession":null,"ticketSessionRef":null}`,
		`{"sessionRef":null,"feedbackType":"CommsAbusiveVoice","textReason":null}`,
	}
	urls := []struct{ method, url string }{
		{"PUT", url}, {"PUT", mpsdAtkSessionURL(SCID(title1), "fresh")}, {"POST", mpsdAtkSessions + "/handles"},
		{"POST", mpsdAtkSessions + "/handles/query"},
		{"POST", "https://smartmatch.xboxlive.com/serviceconfigs/" + SCID(title1) + "/hoppers/ranked"},
		{"POST", "https://reputation.xboxlive.com/users/xuid(" + xuid2 + ")/feedback"},
	}
	for _, u := range urls {
		for _, b := range bodies {
			status, out, p := serveNoPanic(t, h, u.method, u.url, tok, b)
			if p != nil || status >= 500 {
				t.Errorf("%s %s %s: %d %.200s panic=%v", u.method, u.url, b, status, out, p)
			}
		}
	}
	filters := []string{`(`, `)`, `((((`, `a eq`, `eq`, `strings/x eq 'a`, `numbers/n gt x`, `not`, `tags/x and`,
		`strings/x eq 'a' or`, `'`, `''''`, `numbers/n eq 1e999`, `numbers/n eq NaN`, strings.Repeat("(", 5000),
		`session/x eq 1`, `tags/ eq 'x'`, `\u0000`}
	orders := []string{`Numbers/`, `Strings/`, `x y z`, `timestamp desc extra`, ` `, `/`}
	for _, f := range filters {
		for _, o := range append(orders, "") {
			b := `{"type":"search","scid":"` + SCID(title1) + `","templateName":"quick","filter":` + jsonQuote(f) + `,"orderBy":` + jsonQuote(o) + `}`
			status, out, p := serveNoPanic(t, h, "POST", mpsdAtkSessions+"/handles/query", tok, b)
			if p != nil || status >= 500 {
				t.Errorf("query %s: %d %.200s panic=%v", b, status, out, p)
			}
		}
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
