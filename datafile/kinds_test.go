package datafile_test

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/analyze"
	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/replay"
)

// kind is one of the module's kinds of data file, read as its package
// reads one.
type kind struct {
	name     string
	maxBytes int
	read     func(io.Reader) error
}

var (
	world   = kind{"world", mock.MaxWorldBytes, func(r io.Reader) error { _, err := mock.ReadWorld(r); return err }}
	script  = kind{"script", mock.MaxScriptBytes, func(r io.Reader) error { _, err := mock.ReadScript(r); return err }}
	limitsK = kind{"limits", limits.MaxSize, func(r io.Reader) error { _, err := limits.Read(r); return err }}
	rules   = kind{"rules", analyze.MaxRulesSize, func(r io.Reader) error { _, err := analyze.ReadRules(r); return err }}
	pattern = kind{"pattern", replay.MaxPatternSize, func(r io.Reader) error { _, err := replay.ReadPattern(r); return err }}
)

// listFile is a file of a kind that fills a list with small values: what
// each kind must bound before decoding, since "{}," (three bytes) decodes
// into a whole Go value.
type listFile struct {
	kind                  kind
	name                  string
	head, unit, sep, tail string
}

// listFiles are, for every kind, its lists of objects filled with empty
// ones or nulls, alone and nested in another list at its bound.
func listFiles() []listFile {
	return []listFile{
		{world, "json empty accounts", `{"accounts": [`, "{}", ",", "]}"},
		{world, "json null accounts", `{"accounts": [`, "null", ",", "]}"},
		{world, "yaml flow empty accounts", "accounts: [", "{}", ",", "]\n"},
		{world, "yaml block empty accounts", "accounts:\n", "- {}\n", "", ""},
		{world, "json empty titles", `{"accounts": [{"xuid": "1", "titles": [`, "{}", ",", "]}]}"},
		{world, "json accounts of 1000 empty titles", `{"accounts": [`, `{"titles": [` + list("{}", 1000) + `]}`, ",", "]}"},
		{world, "json accounts of 1000 empty recent players", `{"accounts": [`, `{"recentPlayers": [` + list("{}", 1000) + `]}`, ",", "]}"},
		{world, "json empty apps", `{"accounts": [], "apps": [`, "{}", ",", "]}"},
		{script, "json empty rules", `{"rules": [`, "{}", ",", "]}"},
		{script, "json empty answers", `{"rules": [{"answers": [`, "{}", ",", "]}]}"},
		{script, "json rules of 1000 empty answers", `{"rules": [`, `{"answers": [` + list("{}", 1000) + `]}`, ",", "]}"},
		{script, "yaml block empty rules", "rules:\n", "- {}\n", "", ""},
		{limitsK, "json empty rules", `{"rules": [`, "{}", ",", "]}"},
		{limitsK, "yaml flow empty rules", "rules: [", "{}", ",", "]\n"},
		{rules, "json empty batches", `{"batches": [`, "{}", ",", "]}"},
		{pattern, "json empty events", "[", "{}", ",", "]"},
		{pattern, "json null events", "[", "null", ",", "]"},
		{pattern, "csv events", "", "0,p,1,1\n", "", ""},
	}
}

// list is n units, comma separated.
func list(unit string, n int) string { return strings.TrimSuffix(strings.Repeat(unit+",", n), ",") }

// made returns the file, of at most n bytes.
func (f listFile) made(n int) []byte {
	k := max(1, (n-len(f.head)-len(f.tail))/(len(f.unit)+len(f.sep)))
	var b bytes.Buffer
	b.WriteString(f.head)
	for i := range k {
		if i > 0 {
			b.WriteString(f.sep)
		}
		b.WriteString(f.unit)
	}
	b.WriteString(f.tail)
	return b.Bytes()
}

// TestListsRefusedBeforeDecoding: every kind's lists of objects are
// bounded before they are decoded. A list of empty objects ("{},", three
// bytes) decoded each into a whole struct (a WorldAccount is 176 bytes)
// before the count bound refused the list: at 16 MiB the JSON accounts
// allocated 5.9 GB and peaked at 3.5 GB RSS. Now each file costs memory
// in proportion to its length: four times the bytes allocate at most six
// times as much, within 48 bytes a byte for JSON and CSV and 200 for YAML
// (yaml.v3's tree of nodes), at 256 KiB and 1 MiB (YAML, the slower to
// parse, at 64 and 256 KiB), past every bound.
func TestListsRefusedBeforeDecoding(t *testing.T) {
	racebuild.Skip(t, "allocation figures")
	for _, f := range listFiles() {
		t.Run(f.kind.name+"/"+f.name, func(t *testing.T) {
			small, large := 256<<10, 1<<20
			if strings.HasPrefix(f.name, "yaml") {
				small, large = 64<<10, 256<<10
			}
			s, l := f.made(small), f.made(large)
			a0, a1 := allocated(f.kind, s), allocated(f.kind, l)
			if ratio := float64(a1) / float64(a0) / (float64(len(l)) / float64(len(s))); ratio > 1.5 {
				t.Errorf("%d bytes allocated %d, %d bytes %d: %.1f times as much a byte", len(s), a0, len(l), a1, ratio)
			}
			limit := 48.0
			if strings.HasPrefix(f.name, "yaml") {
				limit = 200
			}
			got := float64(a1) / float64(len(l))
			t.Logf("%.1f bytes allocated a byte", got)
			if got > limit {
				t.Errorf("%d bytes allocated %.0f bytes a byte, want at most %.0f", len(l), got, limit)
			}
			var e *datafile.Error
			if err := f.kind.read(bytes.NewReader(l)); !errors.As(err, &e) {
				t.Errorf("%v, want a *datafile.Error", err)
			}
		})
	}
}

// allocated returns the bytes reading data as a file of k allocates.
func allocated(k kind, data []byte) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	k.read(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// BenchmarkRefuseLists reads each file of listFiles at its kind's bound
// (YAML at MaxYAMLBytes) and checks that it is refused; RELIABILITY.md
// records the figures.
func BenchmarkRefuseLists(b *testing.B) {
	for _, f := range listFiles() {
		b.Run(f.kind.name+"/"+f.name, func(b *testing.B) {
			n := f.kind.maxBytes
			if strings.HasPrefix(f.name, "yaml") {
				n = datafile.MaxYAMLBytes
			}
			data := f.made(n)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var e *datafile.Error
				if err := f.kind.read(bytes.NewReader(data)); !errors.As(err, &e) {
					b.Fatalf("%v, want a *datafile.Error", err)
				}
			}
		})
	}
}
