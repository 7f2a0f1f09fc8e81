package mock

import (
	"encoding/json"
	"testing"
)

// FuzzParseRTARequest: a client message is a subscribe or an unsubscribe
// in XSAPI's array form (real_time_activity_connection.cpp,
// AssembleSubscribeMessage, SendUnsubscribeMessage) or refused; what is
// taken writes back as the same message, and a URI it names is one
// parseRTAResource reads the same way twice.
func FuzzParseRTARequest(f *testing.F) {
	for _, s := range []string{
		`[1,1,"https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices"]`,
		`[1,2,"http://social.xboxlive.com/users/xuid(1)/friends"]`, `[2,3,17]`, `[3,1,"x"]`, `[4]`,
		`[1,4294967296,"x"]`, `[1,-1,"x"]`, `[1,1.5,"x"]`, `[2,1,1] [2,1,1]`, `{}`, `[1,1,null]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRTARequest(b)
		if err != nil {
			return
		}
		if r.kind != rtaSubscribe && r.kind != rtaUnsubscribe || r.kind == rtaSubscribe && (r.uri == "" || len(r.uri) > maxRTAURI) {
			t.Fatalf("took %q as %+v", b, r)
		}
		var again []byte
		if r.kind == rtaSubscribe {
			again, _ = json.Marshal([]any{r.kind, r.seq, r.uri})
		} else {
			again, _ = json.Marshal([]any{r.kind, r.seq, r.sub})
		}
		if r2, err := parseRTARequest(again); err != nil || r2 != r {
			t.Fatalf("%q read as %+v, written as %s, read back as %+v, %v", b, r, again, r2, err)
		}
		if res, ok := parseRTAResource(r.uri); ok {
			if res2, _ := parseRTAResource(r.uri); res2 != res || res.key() == "" {
				t.Fatalf("resource %q read as %+v then %+v", r.uri, res, res2)
			}
		}
	})
}

// TestParseRTAResource: the URIs XSAPI's subscriptions build are read,
// whatever the case of the scheme (http or https) and the host; others
// (another scheme, a query, a path's tricks) are not.
func TestParseRTAResource(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want rtaResource
		ok   bool
	}{
		{"https://userpresence.xboxlive.com/users/xuid(1)/devices", rtaResource{kind: rtaDevices, xuid: "1"}, true},
		{"https://UserPresence.xboxlive.com/users/xuid(1)/titles/1234", rtaResource{kind: rtaTitle, xuid: "1", title: "1234"}, true},
		{"http://social.xboxlive.com/users/xuid(1)/friends", rtaResource{kind: rtaFriends, xuid: "1"}, true},
		{"https://sessiondirectory.xboxlive.com/connections/", rtaResource{kind: rtaSessions}, true},
		{"https://social.xboxlive.com/users/xuid(1)/devices", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users/xuid(1)/titles/x", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users/gt(x)/devices", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users/xuid(1)/devices/more", rtaResource{}, false},
		{"userpresence.xboxlive.com/users/xuid(1)/devices", rtaResource{}, false},
		{"HTTPS://userpresence.xboxlive.com/users/xuid(1)/devices", rtaResource{kind: rtaDevices, xuid: "1"}, true},
		{"XBL3.0 x=1;t://userpresence.xboxlive.com/users/xuid(1)/devices", rtaResource{}, false},
		{"wss://userpresence.xboxlive.com/users/xuid(1)/devices", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users/xuid(1)/devices?token=t", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users/xuid(1)/../xuid(2)/devices", rtaResource{}, false},
		{"https://userpresence.xboxlive.com/users%2Fxuid(1)%2Fdevices", rtaResource{}, false},
	} {
		got, ok := parseRTAResource(tc.uri)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRTAResource(%q) = %+v, %v; want %+v, %v", tc.uri, got, ok, tc.want, tc.ok)
		}
	}
}

// BenchmarkParseRTARequest is the read of every client message.
func BenchmarkParseRTARequest(b *testing.B) {
	msg := []byte(`[1,17,"https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices"]`)
	b.ReportAllocs()
	for b.Loop() {
		r, err := parseRTARequest(msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := parseRTAResource(r.uri); !ok {
			b.Fatal("resource not read")
		}
	}
}
