package har

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// attackHAR writes entries with a new Writer and returns the document.
func attackHAR(t *testing.T, es ...Entry) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	for i := range es {
		if err := w.Write(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAttackHARSignInBodyRedactedWhenURLDoesNotParse: the Writer takes the
// host whose rules redact the bodies from url.Parse(Entry.URL); a URL that
// does not parse (an invalid escape in the path, a port that is not a
// number, a URL cut with "..." inside an escape, as the mock's 1 KiB URLs
// and analyze's MaxURL are cut) leaves the host "", and the sign-in
// service's bodies are then redacted as any other host's: the state and
// session of a login.live.com form, and its whole HTML answer (the PPFT
// field), are written as they came.
//
// Promised (internal/har, Writer): "Secrets are written redacted whatever
// the entry holds: the Authorization header, and in URLs and bodies what
// xblauth redacts." and the package doc: "It never writes a secret:
// tokens, codes, tickets and the sign-in services' bodies are redacted".
// xblauth (publicName): "A code, a token, a ticket, a secret, a verifier,
// a proof key, a state, a password or a session is not one", and at a
// sign-in host "What cannot be read as a form or JSON ... is replaced
// whole". The same entry with a URL that parses is written with
// state=REDACTED, session=REDACTED and the answer REDACTED.
// (Today's callers, the mock's journal and analyze.Recorder, redact the
// bodies before the Writer sees them; the Writer's own promise is what
// breaks.)
func TestAttackHARSignInBodyRedactedWhenURLDoesNotParse(t *testing.T) {
	body := []byte("grant_type=authorization_code&client_id=c&state=ATKSTATESECRET&session=ATKSESSIONSECRET")
	page := []byte(`<form><input type="hidden" name="PPFT" value="ATKPPFTSECRET"/></form>`)
	for _, u := range []string{
		"https://login.live.com/oauth20_token.srf",          // parses: redacted (control)
		"https://login.live.com/oauth20_token.srf/%zz",      // an invalid escape
		"https://login.live.com:44x/oauth20_token.srf",      // a port that is no number
		"https://login.live.com/oauth20_token.srf/a%2...",   // cut inside an escape, as safetext.Cut cuts
		"https://user.auth.xboxlive.com/user/authenticate%", // a trailing '%'
	} {
		t.Run(u, func(t *testing.T) {
			doc := attackHAR(t, Entry{Time: t0, Method: "POST", URL: u, RequestBody: body, Status: 200, ResponseBody: page})
			for _, s := range []string{"ATKSTATESECRET", "ATKSESSIONSECRET", "ATKPPFTSECRET"} {
				if bytes.Contains(doc, []byte(s)) {
					t.Errorf("the HAR holds the sign-in secret %s for URL %q", s, u)
				}
			}
		})
	}
}

// TestAttackHARTimingsNotNegative: an entry whose Duration is negative (a
// clock stepped back between the request and its answer, an Entry built by
// hand) is written with "time" and timings.wait negative.
//
// Promised (internal/har): "Writer writes a HAR 1.2 document". HAR 1.2
// (softwareishard.com/blog/har-12-spec, timings): send, wait and receive
// are not optional and must be non-negative (the others -1 when they do
// not apply), and an entry's time is the sum of its timings. fgrl's own
// reader (RELIABILITY.md, TestAttack4HARTimeNeverNegative) takes a
// negative time as unknown: the writer writes what the reader refuses.
func TestAttackHARTimingsNotNegative(t *testing.T) {
	doc := attackHAR(t, Entry{Time: t0, Duration: -5 * time.Millisecond, Method: "GET", URL: "https://profile.xboxlive.com/users/me", Status: 200})
	var h struct {
		Log struct {
			Entries []struct {
				Time    float64            `json:"time"`
				Timings map[string]float64 `json:"timings"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(doc, &h); err != nil || len(h.Log.Entries) != 1 {
		t.Fatalf("not read: %v\n%s", err, doc)
	}
	e := h.Log.Entries[0]
	if e.Time < 0 {
		t.Errorf("entry time %v ms: HAR 1.2 has no negative time", e.Time)
	}
	for _, k := range []string{"send", "wait", "receive"} {
		if v, ok := e.Timings[k]; !ok || v < 0 {
			t.Errorf("timings.%s = %v (present %v): HAR 1.2 wants it non-negative", k, v, ok)
		}
	}
}

// held: odd entries (invalid UTF-8 in the method, URL and bodies, NUL and
// ESC, a binary body, a 1 MiB URL, websocket messages with invalid UTF-8)
// are each written as valid JSON holding every field HAR 1.2 requires
// (log: version, creator{name,version}, entries; entry: startedDateTime,
// time, request, response, cache, timings; request: method, url,
// httpVersion, cookies, headers, queryString, headersSize, bodySize;
// response: status, statusText, httpVersion, cookies, headers, content
// {size, mimeType}, redirectURL, headersSize, bodySize; timings: send,
// wait, receive), and analyze.ReadHAR reads every entry back as a call.
// Promised (internal/har): "Writer writes a HAR 1.2 document one entry at
// a time"; "analyze.ReadHAR reads them". (Observed, not a promise: a
// binary body is written as text, its invalid bytes as U+FFFD, with no
// "encoding": "base64", so it does not read back as recorded.)
func TestAttackHAROddEntriesStayHAR12(t *testing.T) {
	bin := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe, 0x1b, '[', '2', 'J', 0xc0, 0x80}
	es := []Entry{
		{Time: t0, Method: "GE\xffT", URL: "https://profile.xboxlive.com/\xff\x00\x1b[2J", Status: 200, RequestBody: bin, ResponseBody: bin},
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/" + strings.Repeat("a", 1<<20), Status: 200, RetryAfter: "\x00\xff"},
		{Time: t0, Method: "GET", URL: "https://rta.xboxlive.com/connect", Status: 101,
			Messages: []Message{{Sent: true, Time: t0, Data: "[1,1,\"\xff\"]"}, {Time: time.Time{}, Data: "\x00"}}},
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/"}, // no answer (status 0), no body
	}
	doc := attackHAR(t, es...)
	if !json.Valid(doc) {
		t.Fatalf("not JSON:\n%.2000s", doc)
	}
	var h map[string]any
	json.Unmarshal(doc, &h)
	log, _ := h["log"].(map[string]any)
	need := func(where string, m map[string]any, keys ...string) {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q", where, k)
			}
		}
	}
	need("log", log, "version", "creator", "entries")
	creator, _ := log["creator"].(map[string]any)
	need("creator", creator, "name", "version")
	entries, _ := log["entries"].([]any)
	if len(entries) != len(es) {
		t.Fatalf("%d entries, want %d", len(entries), len(es))
	}
	for i, e := range entries {
		em, _ := e.(map[string]any)
		where := fmt.Sprintf("entry %d", i)
		need(where, em, "startedDateTime", "time", "request", "response", "cache", "timings")
		req, _ := em["request"].(map[string]any)
		need(where+".request", req, "method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize")
		resp, _ := em["response"].(map[string]any)
		need(where+".response", resp, "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize")
		content, _ := resp["content"].(map[string]any)
		need(where+".response.content", content, "size", "mimeType")
		timings, _ := em["timings"].(map[string]any)
		need(where+".timings", timings, "send", "wait", "receive")
		if pd, ok := req["postData"].(map[string]any); ok {
			need(where+".request.postData", pd, "mimeType")
		}
		if _, err := time.Parse(time.RFC3339Nano, em["startedDateTime"].(string)); err != nil {
			t.Errorf("%s startedDateTime: %v", where, err)
		}
	}
	if got := read(t, doc); len(got) != len(es) {
		t.Errorf("ReadHAR read %d calls, want %d", len(got), len(es))
	}
}

// held: secrets wherever an entry may hold them, with a URL that parses,
// are never written: the Authorization in every scheme (XBL3.0's token, a
// Bearer, Basic, a forged userhash), a token in a service URL's query and
// fragment, user info, a sign-in form's refresh token and an answer's
// JSON tokens at a service host and a sign-in host. Promised (Writer):
// "Secrets are written redacted whatever the entry holds".
func TestAttackHARSecretsNeverWritten(t *testing.T) {
	es := []Entry{
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me?access_token=ATK1&x=1#id_token=ATK2",
			Authorization: "XBL3.0 x=123;ATK3", Status: 200, ResponseBody: []byte(`{"a":{"b":[{"refresh_token":"ATK4"}]},"Token":"ATK5"}`)},
		{Time: t0, Method: "GET", URL: "https://u:ATK6@profile.xboxlive.com/users/me", Authorization: "Bearer ATK7", Status: 200},
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me", Authorization: "Basic QVRLODpBVEs4", Status: 200},
		{Time: t0, Method: "GET", URL: "https://profile.xboxlive.com/users/me", Authorization: "XBL3.0 x=ATK9;t", Status: 200},
		{Time: t0, Method: "POST", URL: "https://LOGIN.LIVE.COM.:443/oauth20_token.srf", Status: 200,
			RequestBody:  []byte("grant_type=refresh_token&refresh_token=ATK10&code_verifier=ATK11"),
			ResponseBody: []byte(`{"token_type":"bearer","access_token":"ATK12","user_id":"ATK13","foci":"ATK14"}`)},
		{Time: t0, Method: "POST", URL: "https://xhome.gssv-play-prod.xboxlive.com/v2/login/user", Status: 200,
			RequestBody: []byte(`{"token":"ATK15","offeringId":"xhome"}`), ResponseBody: []byte(`{"gsToken":"ATK16"}`)},
	}
	doc := attackHAR(t, es...)
	for i := 1; i <= 16; i++ {
		if s := fmt.Sprintf("ATK%d\"", i); bytes.Contains(doc, []byte(s)) || bytes.Contains(doc, []byte(fmt.Sprintf("ATK%d&", i))) ||
			bytes.Contains(doc, []byte(fmt.Sprintf("ATK%d#", i))) || bytes.Contains(doc, []byte(fmt.Sprintf("ATK%d;", i))) ||
			bytes.Contains(doc, []byte(fmt.Sprintf("ATK%d@", i))) {
			t.Errorf("the HAR holds secret ATK%d:\n%s", i, doc)
		}
	}
	if bytes.Contains(doc, []byte("QVRLODpBVEs4")) {
		t.Errorf("the HAR holds the Basic credentials")
	}
}

// held: many goroutines writing at once through one Writer give one valid
// document with every entry. Promised: "A Writer is safe for concurrent
// use."
func TestAttackHARConcurrentWritesOneDocument(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				w.Write(&Entry{Time: t0, Method: "GET", URL: fmt.Sprintf("https://profile.xboxlive.com/%d/%d", g, i), Status: 200,
					ResponseBody: bytes.Repeat([]byte("x"), 5000)})
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, b.Bytes()); len(got) != 400 {
		t.Errorf("read %d calls, want 400", len(got))
	}
}
