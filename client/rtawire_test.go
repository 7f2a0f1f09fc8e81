package client

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseRTAMessage: a message from the service is one of XSAPI's four
// forms (real_time_activity_connection.cpp: the subscribe and unsubscribe
// answers, an event, a resync) or refused; what is taken turns into
// events without a panic, whatever its data.
func FuzzParseRTAMessage(f *testing.F) {
	for _, s := range []string{
		`[1,1,0,7,{"xuid":"1","state":"Online"}]`, `[1,1,1001]`, `[2,1,0]`, `[3,7,"Scarlett:true"]`, `[3,7,"Started:1234"]`,
		`[3,7,{"NotificationType":"Added","Xuids":["1"]}]`, `[3,7,{"shoulderTaps":[{"resource":"a~b~c","changeNumber":2,"branch":"x"}]}]`,
		`[4]`, `[5]`, `[1,1,0,-1,null]`, `[]`, `[3,1]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseRTAMessage(b)
		if err != nil {
			return
		}
		if m.kind < rtaSubscribe || m.kind > rtaResync {
			t.Fatalf("took %q as %+v", b, m)
		}
		if m.data != nil && !json.Valid(m.data) {
			t.Fatalf("took %q with data %q", b, m.data)
		}
		for _, r := range []Resource{PresenceOf("1"), TitlePresenceOf("1", "1234"), RelationshipsOf("1"), Sessions()} {
			r.event(m.data)
			subscribed(r, m.data)
		}
		for _, ev := range sessionTaps(m.data) {
			if s := ev.(*SessionChange).Session; strings.Contains(s.SCID+s.Template+s.Name, "~") {
				t.Fatalf("tap from %q: %+v", m.data, s)
			}
		}
	})
}

// BenchmarkParseRTAMessage is the read of every event the service pushes.
func BenchmarkParseRTAMessage(b *testing.B) {
	msg := []byte(`[3,17,"Scarlett:true"]`)
	r := PresenceOf("2533274791234567")
	b.ReportAllocs()
	for b.Loop() {
		m, err := parseRTAMessage(msg)
		if err != nil {
			b.Fatal(err)
		}
		if r.event(m.data) == nil {
			b.Fatal("no event")
		}
	}
}
