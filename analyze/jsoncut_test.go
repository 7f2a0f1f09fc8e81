package analyze

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/xblgo/fgrl/internal/safetext"
)

// TestJSONCutter: what the decoder gets of a long string, a run of
// whitespace and a long number, and that offsets past what was cut map
// back to the input: a string is cut at a character's start (a character
// or escape at the cut kept whole, an escaped quote past it no end), the
// whitespace shortened, the number refused; read whole, and with a read
// ending just before, at and after the cut. (TestReadHARChunks reads
// traces 3 bytes at a time.)
func TestJSONCutter(t *testing.T) {
	long := strings.Repeat("x", maxString+100)
	tests := []struct {
		name   string
		in     string
		want   string // the first string value read, "" for none
		errAt  string // the input from where the decoder fails, "" for none
		reason string
	}{
		{"a long string", `["` + long + `", tru]`, long[:maxString], "]", "invalid character"},
		{"a character at the cut", `["` + long[:maxString-1] + `é` + long + `"]`, long[:maxString-1] + "é", "", ""},
		{"an escape at the cut", `["` + long[:maxString-1] + `\u0041` + long + `"]`, long[:maxString-1] + "A", "", ""},
		{"an escaped quote past the cut", `["` + long + `\"", tru]`, long[:maxString], "]", "invalid character"},
		{"a run of whitespace", `["a"` + strings.Repeat(" ", 10*maxSpace) + `, tru]`, "a", "]", "invalid character"},
		{"a long number", `["a", ` + strings.Repeat("1", maxBare+1) + `]`, "a", strings.Repeat("1", maxBare+1)[maxBare:] + "]", "a number or literal over 1 KiB"},
	}
	for _, tt := range tests {
		// Read whole, and in two reads split about where the string is cut.
		for _, split := range []int{len(tt.in), 2 + maxString - 1, 2 + maxString, 2 + maxString + 1} {
			t.Run(fmt.Sprintf("%s, split at %d", tt.name, split), func(t *testing.T) {
				split = min(split, len(tt.in))
				dec, cut := jsonDecoder(io.MultiReader(strings.NewReader(tt.in[:split]), strings.NewReader(tt.in[split:])))
				dec.ReadToken() // [
				var got []byte
				err := readString(dec, &got)
				for err == nil && dec.PeekKind() != ']' {
					err = dec.SkipValue()
				}
				if string(got) != tt.want {
					t.Errorf("read %d bytes %.20q..., want %d", len(got), got, len(tt.want))
				}
				if tt.errAt == "" {
					if err != nil || cut.out >= int64(len(tt.in)) {
						t.Errorf("%v; %d of %d bytes passed on", err, cut.out, len(tt.in))
					}
					return
				}
				if at, want := cut.errOffset(err), int64(strings.LastIndex(tt.in, tt.errAt)); at != want || shortErr(err) != tt.reason {
					t.Errorf("error %q at byte %d; want %q at %d", shortErr(err), at, tt.reason, want)
				}
			})
		}
	}
}

// TestReadHARLongStrings: a URL, a header and bodies longer than what is
// kept are read to their first bytes, a base64 body to what those decode
// to; the trace is read whole.
func TestReadHARLongStrings(t *testing.T) {
	body := strings.Repeat("b", 3*maxString)
	text := base64.StdEncoding.EncodeToString([]byte(body))
	url := "https://social.xboxlive.com/" + strings.Repeat("u", maxString)
	har := harHead + `{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "POST", "url": "` + url + `",
		"headers": [{"name": "User-Agent", "value": "` + strings.Repeat("a", maxString+1) + `"}], "postData": {"text": "` + body + `"}},
		"response": {"status": 200, "content": {"text": "` + text + `", "encoding": "base64"}}}, ` + harOK(1) + `]}}`
	calls, in, err := readHARWith(strings.NewReader(har))
	if err != nil || len(calls) != 2 || !in.Complete() {
		t.Fatalf("%v: %d calls, %+v", err, len(calls), in)
	}
	c := calls[0]
	if c.URL != safetext.Cut(url, MaxURL) || len(c.UserAgent) > MaxUserAgent || string(c.RequestBody) != body[:MaxBody] || string(c.ResponseBody) != body[:MaxBody] {
		t.Errorf("URL %d bytes, User-Agent %d, bodies %d and %d %.10q", len(c.URL), len(c.UserAgent), len(c.RequestBody), len(c.ResponseBody), c.ResponseBody)
	}
	head := `{"log": {"entries": [`
	in, err = ReadHAR(strings.NewReader(head+strings.Repeat("7", 2000)+"]}}"), func(*Call) {})
	want := Problem{0, int64(len(head) + maxBare), "entry 0 is not valid JSON (a number or literal over 1 KiB)"}
	if err != nil || in.Stop == nil || *in.Stop != want {
		t.Errorf("a long number where an entry is: %v, %v; want %v", err, in.Stop, want)
	}
}

// TestJSONCutterQuick: the cutter is in the same state, having passed on
// the same bytes, whether it takes its input in chunks (quick passes most
// of each on without looking at each byte) or a byte at a time (each byte
// looked at): strings short and long, escapes, runs of whitespace and
// numbers near the bounds, and a number past them.
func TestJSONCutterQuick(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 400 {
		fmt.Fprintf(&b, `{"k%d": "%s", "e": "a\"b\\u00e9%s", "n": %s,%s"s": %q},`, i, strings.Repeat("v", i*i%3000), strings.Repeat("w", i%700),
			strings.Repeat("7", i*7%maxBare+1), strings.Repeat(" ", i*13%(2*maxSpace)), strings.Repeat("x", i*977%5000))
	}
	b.WriteString(`"` + strings.Repeat("y", maxString+3) + `", ` + strings.Repeat("9", maxBare+5) + "]")
	in := []byte(b.String())
	chunked, bytewise := &jsonCutter{}, &jsonCutter{}
	state := func(c *jsonCutter) string {
		return fmt.Sprint(c.state, c.run, c.bare, c.hex, c.out, c.in, c.err, c.cuts)
	}
	for at := 0; at < len(in) && chunked.err == nil; at += 4093 {
		chunk := in[at:min(at+4093, len(in))]
		cp := bytes.Clone(chunk)
		kept := string(cp[:chunked.filter(cp)])
		var each []byte
		for i := range chunk {
			if bytewise.err != nil {
				break
			}
			one := []byte{chunk[i]}
			each = append(each, one[:bytewise.filter(one)]...)
		}
		if kept != string(each) || state(chunked) != state(bytewise) {
			t.Fatalf("at byte %d: in chunks %.60q..., state %.200s; a byte at a time %.60q..., state %.200s", at, kept, state(chunked), each, state(bytewise))
		}
	}
	if chunked.err != errBareToken || chunked.in != int64(bytes.LastIndexByte(in, '9')-4) {
		t.Errorf("stopped on %v at byte %d; want the long number refused at byte %d", chunked.err, chunked.in, bytes.LastIndexByte(in, '9')-4)
	}
}
