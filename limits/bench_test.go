package limits

import "testing"

func BenchmarkMatch(b *testing.B) {
	l := Default()
	b.ReportAllocs()
	for b.Loop() {
		l.Match("POST", "userpresence.xboxlive.com", "/users/xuid(2533274791234567)/devices/current/titles/current")
	}
}
