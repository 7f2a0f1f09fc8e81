package wiretest

import (
	"strings"
	"testing"
)

// requestTarget returns the request line's target as the file writes it.
func requestTarget(t *testing.T, name string) string {
	t.Helper()
	b, err := files.ReadFile("testdata/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "\n-- request --\n")
	for _, line := range strings.Split(head, "\n") {
		switch {
		case line == "", strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "caller: "), strings.HasPrefix(line, "title: "),
			strings.HasPrefix(line, "scid: "), strings.HasPrefix(line, "before: "):
		default:
			_, target, _ := strings.Cut(line, " ")
			return target
		}
	}
	t.Fatalf("%s: no request line", name)
	return ""
}

// Break. wiretest.go: "URL returns the request's path and query as sent."
// and the package doc: "The path is written exactly as it goes on the wire
// (escaped once)". URL re-encodes the query (url.Values.Encode: keys sorted,
// every comma written %2C), so the mock's wire test (mock/wire_test.go,
// replayExchange) sends GetProfileByGamertag's settings list and
// GetLeaderboard's maxItems and continuationToken other than XSAPI and
// xbox-webapi-python send them.
func TestAttackURLIsAsSent(t *testing.T) {
	for _, n := range []string{"GetProfileByGamertag", "GetLeaderboard"} {
		x, err := Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if want := requestTarget(t, n); x.URL() != want {
			t.Errorf("%s: URL() = %q, recorded as sent: %q", n, x.URL(), want)
		}
	}
}

// held: a file whose markers are CRLF-separated, whose answer is followed by
// a second value, or whose status is not a number is refused, not half read.
func TestAttackParseRefusesMalformed(t *testing.T) {
	for _, in := range []string{
		"GET /x\r\n-- request --\r\n-- response 200 --\r\n{}",
		"GET /x\n-- request --\n-- response 200 --\n{} {}",
		"GET /x\n-- request --\n-- response 2OO --\n{}",
		"GET /x\n-- request --\n{\"a\":1}{\n-- response 200 --\n{}",
	} {
		if x, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, x)
		}
	}
}
