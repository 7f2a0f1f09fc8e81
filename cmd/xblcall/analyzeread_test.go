package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// redHAR is a HAR of a call that passes, then two 429s in a row (red);
// bad, when set, goes into the first call's User-Agent.
func redHAR(bad string) string {
	e := func(s int, host, user string, status int, ua string) string {
		return fmt.Sprintf(`{"startedDateTime": "2026-03-01T20:00:%02dZ", "request": {"method": "GET", "url": "https://%s/users/me/profile/settings",
			"headers": [{"name": "Authorization", "value": "XBL3.0 x=%s;t"}, {"name": "User-Agent", "value": "game%s"}]},
			"response": {"status": %d, "headers": [{"name": "Retry-After", "value": "60"}]}}`, s, host, user, ua, status)
	}
	return `{"log": {"entries": [` + e(0, "social.xboxlive.com", "1", 200, bad) + ",\n" + e(1, "profile.xboxlive.com", "2", 429, "") + ",\n" +
		e(2, "profile.xboxlive.com", "2", 429, "") + "]}}"
}

// TestAnalyzeIncomplete: xblcall analyze exits 2 on a trace not read whole,
// naming the trace, the entry and the byte, whatever the calls read (here
// green: the 429s that fail are past the cut), from a file, from standard
// input, among other traces, in every format and with --what-if. One bad
// byte is no cut: that trace is read whole and red. Before, a trace cut
// short was judged green with a warning (exit 0), and one with a bad byte
// too.
func TestAnalyzeIncomplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	red := redHAR("")
	cut := red[:strings.LastIndex(red, "Retry-After")]
	cutFile, redFile, badByte := filepath.Join(dir, "cut.har"), filepath.Join(dir, "red.har"), filepath.Join(t.TempDir(), "bad.har")
	os.WriteFile(cutFile, []byte(cut), 0o644)
	os.WriteFile(redFile, []byte(red), 0o644)
	os.WriteFile(badByte, []byte(redHAR("\xff")), 0o644)
	csv := "v1510\n\"Host\",\"Uri\",\"XboxUserId\",\"MultiplayerCorrelationId\",\"RequestHeaders\",\"RequestBody\",\"ResponseHeaders\",\"ResponseBody\",\"HttpStatusCode\",\"EllapsedCallTimeMs\",\"ReqTimeUTC\",\"IsGet\"\n" +
		`"social.xboxlive.com","https://social.xboxlive.com/users/me/people","1","","","","","","200","80","2026-03-01T20:00:00Z","true"` + "\n"
	badRow := `"profile.xboxlive.com","https://profile.xboxlive.com/users/me/profile/settings","2","","","","Retry-After: 60"` + "\n"
	where := fmt.Sprintf("entry 2 at byte %d: the file ends inside entry 2", len(cut))
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string
	}{
		{"a file", []string{cutFile}, "", 2, []string{"INCOMPLETE: read in part: " + where, "verdict INCOMPLETE", "verdict incomplete: not read whole: " + cutFile + ": " + where}},
		{"standard input", []string{"-"}, cut, 2, []string{"verdict incomplete: not read whole: standard input: " + where}},
		{"standard input, a CSV row that is no call", []string{"-"}, csv + badRow + csv[strings.Index(csv, `"social`):], 2,
			[]string{fmt.Sprintf("standard input: entry 1 at byte %d: 7 fields, want at least 12", len(csv))}},
		{"among other traces", []string{redFile, cutFile}, "", 2, []string{"verdict incomplete: not read whole: " + cutFile + ": " + where}},
		{"a directory", []string{dir}, "", 2, []string{cutFile + ": " + where}},
		{"--format json", []string{"--format", "json", cutFile}, "", 2, []string{`"verdict": "incomplete"`, `"offset": ` + fmt.Sprint(len(cut))}},
		{"--format junit", []string{"--format", "junit", cutFile}, "", 2, []string{`<error type="incomplete" message="` + where}},
		{"--format sarif", []string{"--format", "sarif", cutFile}, "", 2, []string{`"ruleId": "incomplete-trace"`, `"executionSuccessful": false`}},
		{"--format html", []string{"--format", "html", cutFile}, "", 2, []string{`id="incomplete"`}},
		{"--what-if", []string{"--what-if", cutFile}, "", 2, []string{"INCOMPLETE: " + cutFile + ": not read whole: " + where, "verdict: incomplete in the traces"}},
		{"a bad byte, read whole", []string{badByte}, "", 1, []string{"bad.har: 3 calls\n", "verdict RED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o, e bytes.Buffer
			code := run(t.Context(), append([]string{"analyze"}, tt.args...), &o, &e, withTestEnv(t), withStdin(strings.NewReader(tt.stdin)))
			for _, want := range tt.want {
				if code != tt.code || !strings.Contains(o.String()+e.String(), want) {
					t.Errorf("exit %d, want %d and %q in:\n%.3000s%s", code, tt.code, want, o.String(), e.String())
				}
			}
		})
	}
}

// repeated is head, then unit n times, then tail, made as it is read.
type repeated struct {
	parts []string // head, unit, tail
	n     int      // units left
	buf   string
}

func (r *repeated) Read(p []byte) (int, error) {
	for r.buf == "" {
		switch {
		case r.parts[0] != "":
			r.buf, r.parts[0] = r.parts[0], ""
		case r.n > 0:
			r.buf, r.n = r.parts[1], r.n-1
		case r.parts[2] != "":
			r.buf, r.parts[2] = r.parts[2], ""
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// heapSampler is standard input (or output) that, each time another MiB
// has gone through it, collects garbage and notes the heap in use.
type heapSampler struct {
	r          io.Reader
	w          io.Writer
	read, next int64
	peak       uint64
}

func (s *heapSampler) note(n int) {
	if s.read += int64(n); s.read >= s.next {
		s.next += 1 << 20
		s.peak = max(s.peak, liveHeap())
	}
}

func (s *heapSampler) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.note(n)
	return n, err
}

func (s *heapSampler) Write(p []byte) (int, error) {
	if s.read == 0 { // the first write of the report: the analysis is all there
		s.note(1 << 20)
	}
	return s.w.Write(p)
}

// liveHeap is the heap in use after a collection (two: what sync.Pools
// hold goes on the second).
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestAnalyzeStdinMemory: xblcall analyze - holds per byte of standard
// input what analyze.TestReadMemoryBounded finds from a file (the same
// bounds, which RELIABILITY.md states): many entries, and one string (a
// body, a field) of 32 MiB. A .saz goes to a temporary file, then is read
// as a file. The heap is sampled after a collection at each MiB read, and
// as the report is written.
func TestAnalyzeStdinMemory(t *testing.T) {
	// Serial: it measures the process's heap.
	entry := `{"startedDateTime":"2026-03-01T20:00:00.5Z","request":{"method":"GET","url":"https://social.xboxlive.com/users/xuid(2533274791234567)/people?n=1",` +
		`"headers":[{"name":"Authorization","value":"XBL3.0 x=7;REDACTED"},{"name":"Accept","value":"application/json"}]},"response":{"status":200,"content":{"size":0}}},`
	csvHead := "v1510\n\"Host\",\"Uri\",\"XboxUserId\",\"MultiplayerCorrelationId\",\"RequestHeaders\",\"RequestBody\",\"ResponseHeaders\",\"ResponseBody\",\"HttpStatusCode\",\"EllapsedCallTimeMs\",\"ReqTimeUTC\",\"IsGet\"\n"
	row := `"userpresence.xboxlive.com","https://userpresence.xboxlive.com/users/xuid(2533274791234567)/devices/current/titles/current","2533274791234567","",` +
		`"User-Agent: XboxServicesAPI/2021 c","{""state"":""active""}","","","200","80","2026-03-01T20:00:00.000Z","false"` + "\n"
	// ReqTimeUTC 2026-03-01T20:00:00Z: a Windows file time's bits as a double's.
	call := `{"Uri": "https://userpresence.xboxlive.com/users/xuid(2533274791234567)", "XboxUserId": "2533274791234567", "HttpStatusCode": 200, "ReqTimeUTC": 1.0700029073806202e-299, "IsGet": true},`
	huge := strings.Repeat("x", 4096)
	tests := []struct {
		name             string
		head, unit, tail string
		n                int
		bound            float64
	}{
		{"HAR, many entries", `{"log":{"entries":[`, entry, entry[:len(entry)-1] + "]}}", 4 << 20 / len(entry), 0.4},
		{"HAR, one huge string", `{"log":{"entries":[` + entry + `{"startedDateTime":"2026-03-01T20:00:01Z","request":{"method":"POST","url":"https://a.xboxlive.com/","postData":{"text":"`,
			huge, `"}},"response":{"status":200}}]}}`, 32 << 20 / len(huge), 0.1},
		{".saz, many sessions", "", "", "", 0, 0.6},
		{"CSV data, many rows", csvHead, row, "", 4 << 20 / len(row), 0.4},
		{"CSV data, one huge field", csvHead + `"h","https://h/","1","","","`, huge, `","","","200","1","2026-03-01T20:00:00Z","true"` + "\n", 32 << 20 / len(huge), 0.1},
		{"JSON data, many calls", `[{"Endpoint": "userpresence.xboxlive.com", "Calls": [`, call, call[:len(call)-1] + "]}]", 4 << 20 / len(call), 0.4},
		{"JSON data, one huge string", `[{"Endpoint": "h", "Calls": [{"Uri": "https://h/", "HttpStatusCode": 200, "ReqTimeUTC": 1.0700029073806202e-299, "RequestBody": "`, huge, `"}]}]`, 32 << 20 / len(huge), 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in io.Reader = &repeated{parts: []string{tt.head, tt.unit, tt.tail}, n: tt.n}
			size := int64(len(tt.head) + tt.n*len(tt.unit) + len(tt.tail))
			if tt.name == ".saz, many sessions" {
				f := sazFile(t, 2<<20/700)
				defer f.Close()
				st, _ := f.Stat()
				in, size = f, st.Size()
			}
			base := liveHeap()
			s := &heapSampler{r: in, w: io.Discard, next: 1 << 20}
			code := run(t.Context(), []string{"analyze", "-"}, s, io.Discard, withTestEnv(t), withStdin(s))
			perByte := float64(s.peak-min(s.peak, base)) / float64(size)
			t.Logf("%.1f MiB: %.4f bytes of heap per input byte, at most %.2f MiB", float64(size)/(1<<20), perByte, float64(s.peak-min(s.peak, base))/(1<<20))
			if code > 1 || perByte > tt.bound {
				t.Errorf("exit %d, %.4f bytes of heap per input byte; want the trace judged (exit 0 or 1), at most %.2f", code, perByte, tt.bound)
			}
		})
	}
}

// sazFile is a .saz of n sessions in a temporary file, open at its start.
func sazFile(t *testing.T, n int) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), "t.saz"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for i := range n {
		for _, file := range [][2]string{
			{"c.txt", fmt.Sprintf("GET https://profile.xboxlive.com/users/xuid(%d)/profile/settings HTTP/1.1\r\nHost: profile.xboxlive.com\r\nAuthorization: XBL3.0 x=7;t\r\n\r\n", i)},
			{"s.txt", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"},
			{"m.xml", fmt.Sprintf(`<Session><SessionTimers ClientBeginRequest="2026-03-01T20:%02d:%02dZ"/></Session>`, i/60%60, i%60)},
		} {
			w, _ := z.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("raw/%d_%s", i, file[0]), Method: zip.Store})
			io.WriteString(w, file[1])
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, io.SeekStart)
	return f
}

// TestAnalyzeHeaderQuoteIncomplete: a CSV data file whose header line
// opens a quote it never closes (the header would swallow the file, 429s
// and all) stops reading at its header: beside a green trace, the verdict
// is incomplete, exit 2, naming the file and the byte after the version
// line. Before, it was read whole with no row: green, exit 0.
func TestAnalyzeHeaderQuoteIncomplete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	green := filepath.Join(dir, "green.har")
	os.WriteFile(green, []byte(`{"log": {"entries": [{"startedDateTime": "2026-03-01T20:00:00Z", "request": {"method": "GET",
		"url": "https://social.xboxlive.com/users/me/people", "headers": [{"name": "Authorization", "value": "XBL3.0 x=1;t"}]},
		"response": {"status": 200}}]}}`), 0o644)
	row := func(s string) string {
		return `profile.xboxlive.com,https://profile.xboxlive.com/users/me/profile/settings,2,,,,Retry-After: 60,,429,80,2026-03-01T20:00:0` + s + `Z,true` + "\n"
	}
	data := filepath.Join(dir, "data.csv")
	os.WriteFile(data, []byte("v1510\nHost,Uri,XboxUserId,MultiplayerCorrelationId,RequestHeaders,RequestBody,ResponseHeaders,ResponseBody,"+
		"HttpStatusCode,EllapsedCallTimeMs,ReqTimeUTC,\"IsGet\n"+row("1")+row("2")+row("3")), 0o644)
	code, out, errs := xblcall(t, "analyze", green, data)
	if code != 2 || !strings.Contains(errs, "data.csv: entry 0 at byte 6: the header line opens a quote") {
		t.Errorf("exit %d; want 2, the data file not read whole\n%s%s", code, out, errs)
	}
}
