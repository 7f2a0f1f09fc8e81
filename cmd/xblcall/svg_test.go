package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/xblgo/fgrl/replay"
)

func TestNiceStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v, n  int
		steps []int
		want  int
	}{
		{0, 4, nil, 1},
		{4, 4, nil, 1},
		{31, 4, nil, 10},
		{148, 4, nil, 50},
		{1000, 4, nil, 500},
		{1 << 62, 4, nil, 1e18}, // no overflow past the largest power of ten
		{300, 8, timeSteps, 60},
		{86400, 8, timeSteps, 3 * 3600},
		{30 * 86400, 8, timeSteps, 7 * 86400},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.v, "/", tt.n), func(t *testing.T) {
			got := niceStep(tt.v, tt.n, tt.steps...)
			if got != tt.want {
				t.Errorf("niceStep(%d, %d) = %d, want %d", tt.v, tt.n, got, tt.want)
			}
			if tt.v/got > tt.n {
				t.Errorf("%d ticks, want at most %d", tt.v/got, tt.n)
			}
		})
	}
}

func TestSpan(t *testing.T) {
	t.Parallel()
	var got []string
	for _, d := range []time.Duration{0, 45 * time.Second, 2 * time.Minute, 150 * time.Second, 3 * time.Hour, 90 * time.Minute, 72 * time.Hour} {
		got = append(got, span(d))
	}
	want := []string{"0", "45s", "2m", "2m30s", "3h", "1h30m", "3d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span (-want +got):\n%s", diff)
	}
}

// TestBucketize checks that a day of intervals is grouped into at most
// maxBuckets buckets, each keeping its busiest interval and highest
// sustain count, and that the sustain line stops at the key's last row.
func TestBucketize(t *testing.T) {
	t.Parallel()
	const day = 86400
	k := replay.KeyResult{Rows: []replay.Row{
		{Start: 0, End: 15, Requests: 3, SustainCount: 3},
		{Start: 15, End: 30, Requests: 9, Throttled: 2, SustainCount: 12},
		{Start: 30, End: 3600, SustainCount: 12}, // idle
		{Start: 3600, End: 3615, Requests: 1, SustainCount: 1},
	}}
	b := bucketize(k, day)
	if len(b.peak) > maxBuckets || b.end < day {
		t.Fatalf("%d buckets over %d s, want at most %d over %d s", len(b.peak), b.end, maxBuckets, day)
	}
	per := b.size * 15
	if diff := cmp.Diff(k.Rows[1], b.peak[0]); diff != "" {
		t.Errorf("first bucket's peak (-want +got):\n%s", diff)
	}
	if got := b.sust[0]; got != 12 {
		t.Errorf("first bucket's sustain = %d, want 12", got)
	}
	if want := (3615 + per - 1) / per; len(b.sust) != want {
		t.Errorf("sustain line covers %d buckets, want %d (to the last row)", len(b.sust), want)
	}
}

// TestChartRenders renders simulate's chart with rsvg-convert (Debian's
// librsvg2-bin) and looks at the picture: its size is the SVG's, it is not
// blank, and throttled calls are red next to served green.
func TestChartRenders(t *testing.T) {
	t.Parallel()
	rsvg, err := exec.LookPath("rsvg-convert")
	if err != nil {
		if os.Getenv("FGRL_REQUIRE_RSVG") != "" {
			t.Fatal("rsvg-convert not found and FGRL_REQUIRE_RSVG is set")
		}
		t.Skip("rsvg-convert not found (apt-get install librsvg2-bin)")
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "chart.svg")
	if code, _, errs := xblcall(t, "simulate", "--client", "all", "--svg", svg); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	out, err := exec.Command(rsvg, svg).Output()
	if err != nil {
		t.Fatalf("rsvg-convert: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	w, h := svgSize(t, svg)
	if got := img.Bounds().Size(); got != image.Pt(w, h) {
		t.Errorf("PNG is %v, want %dx%d", got, w, h)
	}
	if w != chartWidth || h < 3*(2*plotHeight) {
		t.Errorf("chart is %dx%d, want %d wide and room for 3 panels", w, h, chartWidth)
	}
	c := census(img)
	if c.ink < c.total/20 {
		t.Errorf("%d of %d pixels are not white: the chart looks blank", c.ink, c.total)
	}
	if c.red == 0 || c.green == 0 || c.blue == 0 {
		t.Errorf("red %d, green %d, blue %d pixels: want throttled, served and the sustain line", c.red, c.green, c.blue)
	}
}

// svgSize reads the root element's width and height.
func svgSize(t *testing.T, name string) (int, int) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Width  int `xml:"width,attr"`
		Height int `xml:"height,attr"`
	}
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	return root.Width, root.Height
}

type pixels struct{ total, ink, red, green, blue int }

func census(img image.Image) pixels {
	var p pixels
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			R, G, B := cr>>8, cg>>8, cb>>8
			p.total++
			if R < 240 || G < 240 || B < 240 {
				p.ink++
			}
			switch {
			case R > 200 && G < 60 && B < 90: // crimson
				p.red++
			case R < 80 && G > 120 && B < 110: // seagreen
				p.green++
			case R < 100 && G > 110 && B > 160: // steelblue
				p.blue++
			}
		}
	}
	return p
}

// TestChartLongAndHostile draws a day-long, many-key pattern from a file
// whose name carries markup: the SVG stays well-formed XML, bounded in
// size, one panel per drawn key with a note for the rest.
func TestChartLongAndHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pattern := filepath.Join(dir, `<a&"b>.csv`)
	var b strings.Builder
	b.WriteString("time,service,user,count,spread\n")
	for i := range 6 {
		for at := 0; at < 86400; at += 3600 {
			fmt.Fprintf(&b, "%d,profile,%d,20,30\n", at+i, 2533274791234560+i)
		}
	}
	os.WriteFile(pattern, []byte(b.String()), 0o644)
	svg := filepath.Join(dir, "long.svg")
	if code, _, errs := xblcall(t, "simulate", "--pattern", pattern, "--client", "fgrl", "--svg", svg); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if err := xmlError(data); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	if len(data) > 400<<10 {
		t.Errorf("SVG is %d bytes for a day: not aggregated", len(data))
	}
	for _, want := range []string{"&lt;a&amp;&#34;b&gt;.csv", "busiest 15 s of each", "2 more keys not drawn"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := bytes.Count(data, []byte(`font-weight="bold"`)); n != chartKeysPerClient {
		t.Errorf("%d panels, want %d", n, chartKeysPerClient)
	}
}

// xmlError returns why data is not well-formed XML, or nil.
func xmlError(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}
