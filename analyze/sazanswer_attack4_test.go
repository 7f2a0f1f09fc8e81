package analyze_test

// A fourth outside attack on the trace analyzer (atk-analyze4): .saz answer
// files as sazResponse reads them since 6dce909 (interim 1xx passed over,
// bytes after the final answer a problem).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/analyze"
)

const attack4429s4 = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"

// TestAttack4SAZHeadAnswerHidesA429: saz.go's sazResponse doc ("bytes after its
// body (another answer) make the session a problem, since which answer the
// client acted on is unknown") and analyze/doc.go (a trace not read whole
// is incomplete; no gate passes it). RFC 9110 §9.3.2: the answer to HEAD
// has no content, whatever its Content-Length says (§8.6: it is the length
// a GET's would have). A HEAD session's answer file holds a 200 with
// Content-Length: N and then a whole 429 answer of N bytes: the 429 is
// bytes after the HEAD answer. sazResponse reads every answer as a GET's
// (http.ReadResponse(r, nil)), so the 429 is swallowed as the 200's body:
// two such sessions (two 429s in a row, red) read green, whole.
func TestAttack4SAZHeadAnswerHidesA429(t *testing.T) {
	hidden := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(attack4429s4)) + attack4429s4
	rep, in := attack3AnalyzeSAZ(t, attack3SAZ(t, "HEAD", time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), hidden, hidden))
	if rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow {
		t.Errorf("HEAD answers holding a 200 (Content-Length %d) then a 429: verdict %s, complete %v, problems %v; want red or incomplete",
			len(attack4429s4), rep.Verdict, in.Complete(), in.Problems)
	}
}

// held: TestAttack4SAZAnswerHeldProbes: the same promises. Each case is two
// sessions with the same answer file.
func TestAttack4SAZAnswerHeldProbes(t *testing.T) {
	for _, c := range []struct {
		name, method, answer string
		whole                bool   // read whole
		verdict              string // when read whole
	}{
		// a HEAD's answer naming a length and holding no body is whole.
		{"HEAD 200 Content-Length 1234, no body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n", true, analyze.Yellow},
		// 101 then bytes (a socket's frames): the bytes are a problem.
		{"101 then bytes", "GET", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + attack4429s4, false, ""},
		// a 100 and nothing after it: no final answer.
		{"100 then nothing", "GET", "HTTP/1.1 100 Continue\r\n\r\n", false, ""},
		// a 100 and a cut answer.
		{"100 then a cut answer", "GET", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 42", false, ""},
		// 2,000 interim answers then the 429: read as the 429.
		{"2000 interim answers then 429", "GET", strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n", 2000) + attack4429s4, true, analyze.Red},
		// an interim answer naming a length: 1xx has no content (RFC 9110 §15.2).
		{"100 with Content-Length then 429", "GET", "HTTP/1.1 100 Continue\r\nContent-Length: 5\r\n\r\n" + attack4429s4, true, analyze.Red},
		// chunked 200 with a trailer, then a 429: bytes after.
		{"chunked with trailers then 429", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" + attack4429s4, false, ""},
		// a 429 with a chunked body and trailers: a 429.
		{"chunked 429 with trailers", "GET", "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", true, analyze.Red},
		// a 429 whose body is cut short is still a 429.
		{"429 body cut short", "GET", "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 100\r\n\r\nabc", true, analyze.Red},
		// 204 then a 429: 204 has no content, the 429 is bytes after.
		{"204 then 429", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 70\r\n\r\n" + attack4429s4, false, ""},
	} {
		rep, in := attack3AnalyzeSAZ(t, attack3SAZ(t, c.method, time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC), c.answer, c.answer))
		switch {
		case in.Complete() != c.whole:
			t.Errorf("%s: complete %v (problems %v, stop %v), want %v", c.name, in.Complete(), in.Problems, in.Stop, c.whole)
		case c.whole && rep.Verdict != c.verdict:
			t.Errorf("%s: verdict %s, want %s", c.name, rep.Verdict, c.verdict)
		case !c.whole && (rep.Verdict == analyze.Green || rep.Verdict == analyze.Yellow):
			t.Errorf("%s: not read whole, yet verdict %s", c.name, rep.Verdict)
		}
	}
}
