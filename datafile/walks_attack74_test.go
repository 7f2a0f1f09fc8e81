package datafile

import (
	"strconv"
	"strings"
	"testing"
)

// attack74WorldJSON is a world file as mock.ReadWorld reads it: one account
// playing titles titles, each with 100 stats (names as a game writes
// them, "weapon.17.kills") and its achievements; the last title's
// achievements name "6", which the world's check refuses as
// "accounts[0].titles[<titles-1>].achievements.6". It is written as
// encoding/json's MarshalIndent would, one member a line.
func attack74WorldJSON(titles int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"accounts\": [\n    {\n      \"xuid\": \"2533274800000001\",\n      \"gamertag\": \"Big\",\n      \"titles\": [\n")
	for j := range titles {
		if j > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("        {\n          \"titleId\": \"" + strconv.Itoa(1000000+j) + "\",\n")
		b.WriteString("          \"lastPlayed\": \"2024-05-01T10:00:00Z\",\n")
		ach := "1"
		if j == titles-1 {
			ach = "6"
		}
		b.WriteString("          \"achievements\": {\n            \"" + ach + "\": 100\n          },\n")
		b.WriteString("          \"stats\": {\n")
		for s := range 100 {
			if s > 0 {
				b.WriteString(",\n")
			}
			b.WriteString("            \"weapon." + strconv.Itoa(s) + ".kills\": " + strconv.Itoa(s*7))
		}
		b.WriteString("\n          }\n        }")
	}
	b.WriteString("\n      ]\n    }\n  ]\n}\n")
	return []byte(b.String())
}

// attack74LimitsJSON is a limits file as limits.Read reads it: one rule whose
// hosts are n host names, the last one not a host name, which the limits'
// check refuses as "rules[0].hosts[<n-1>]".
func attack74LimitsJSON(n int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"revision\": \"2020\",\n  \"source\": \"test\",\n  \"rules\": [\n    {\n      \"service\": \"social\",\n      \"burst\": 10,\n      \"sustain\": 30,\n      \"hosts\": [\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		h := "host" + strconv.Itoa(i) + ".title.example.xboxlive.com"
		if i == n-1 {
			h = "not a host"
		}
		b.WriteString("        \"" + h + "\"")
	}
	b.WriteString("\n      ]\n    }\n  ]\n}\n")
	return []byte(b.String())
}

// attack74Passes reads data as a file of a kind with no bounds into an any,
// has the check name field, and returns the bytes the passes other than
// the decode read, and the line given.
func attack74Passes(t *testing.T, data []byte, field string) (walked, line int) {
	t.Helper()
	src := &source{json: data}
	var v any
	e := src.read(&Kind{Name: "atk", MaxBytes: 16 << 20}, &v, func() error {
		return &Error{Field: field, Reason: "bad"}
	})
	if e == nil || e.Reason != "bad" {
		t.Fatalf("%v, want the check's error", e)
	}
	return src.walked, e.Line
}

// TestAttack74PlacementPassesRealisticFiles: a world file of one account with
// 600 titles (2.3 MB, the world's own check refusing its last title's
// achievement "6") and a limits file of one rule with 20,000 hosts
// (0.9 MB, the last not a host name): placing the check's field reads
// the JSON four times (five with the scan): the top object whole, the
// account or rule whole, the titles or hosts up to the element, then the
// line count; not "at most two more passes". The same files read through
// mock.ReadWorld and limits.Read give these fields
// (TestAttack74RealisticFilesFields).
//
// Promised (RELIABILITY.md, data files): "one pass of jsontext through
// the JSON before anything is decoded ...; one decode ...; and at most
// two more passes to place an error on its line and field." and
// (linear_test.go, TestReadingLinear): "the passes that find an error's
// line and field read each byte a few times at most" (bounded there to
// 4 times the JSON in all).
func TestAttack74PlacementPassesRealisticFiles(t *testing.T) {
	for _, c := range []struct {
		name, field string
		data        []byte
	}{
		{"world", "accounts[0].titles[599].achievements.6", attack74WorldJSON(600)},
		{"limits", "rules[0].hosts[19999]", attack74LimitsJSON(20000)},
	} {
		walked, line := attack74Passes(t, c.data, c.field)
		want := strings.Count(string(c.data[:strings.LastIndex(string(c.data), map[string]string{"world": "\"6\"", "limits": "\"not a host\""}[c.name])]), "\n") + 1
		if line != want {
			t.Errorf("%s: field %q given line %d, want %d", c.name, c.field, line, want)
		}
		placing := walked - len(c.data) // the scan reads the JSON once
		t.Logf("%s: %d bytes; the passes read %.2f times the JSON, placing the field %.2f times", c.name, len(c.data), float64(walked)/float64(len(c.data)), float64(placing)/float64(len(c.data)))
		if placing > 2*len(c.data) {
			t.Errorf("%s: placing %q read %d bytes of %d (%.2f passes), want at most two passes", c.name, c.field, placing, len(c.data), float64(placing)/float64(len(c.data)))
		}
		if walked > 4*len(c.data) {
			t.Errorf("%s: the passes read %d bytes of %d (%.2f times), want at most 4 times the JSON", c.name, walked, len(c.data), float64(walked)/float64(len(c.data)))
		}
	}
}

// TestAttack74PlacementPassesDeepChain: a file of 60 nested objects, each the
// member "k" of the last, the deepest holding 1 MB of members and, last,
// "x": a check naming "k.k…k.x" (the value there) is placed by reading
// the file once a level, 60 times over.
//
// Promised (RELIABILITY.md): "at most two more passes to place an error
// on its line and field"; (TestReadingLinear) "the passes that find an
// error's line and field read each byte a few times at most".
func TestAttack74PlacementPassesDeepChain(t *testing.T) {
	const depth = 60
	var b strings.Builder
	b.WriteString(strings.Repeat("{\"k\":\n", depth))
	b.WriteString("{")
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString("\"p" + strconv.Itoa(i) + "\": 1,\n")
	}
	b.WriteString("\"x\": -1}")
	b.WriteString(strings.Repeat("}", depth))
	data := []byte(b.String())
	field := strings.Repeat("k.", depth) + "x"
	walked, line := attack74Passes(t, data, field)
	if want := strings.Count(b.String(), "\n") + 1; line != want {
		t.Errorf("field given line %d, want %d", line, want)
	}
	placing := walked - len(data)
	t.Logf("%d bytes; the passes read %.1f times the JSON, placing the field %.1f times", len(data), float64(walked)/float64(len(data)), float64(placing)/float64(len(data)))
	if walked > 4*len(data) {
		t.Errorf("the passes read %d bytes of %d (%.1f times), want at most 4 times the JSON (\"a few times at most\")", walked, len(data), float64(walked)/float64(len(data)))
	}
}
