package transport

import (
	"crypto/sha256"
	"encoding/binary"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// readKey names what an answer depends on: the credentials it was sent
// with (a digest, never the secret), the title, the URL and the headers
// that choose a representation. In a flight's key, the call's policy too:
// a call joins only one that would wait, retry and time out as it would
// itself. A cached answer is kept under the key with a zero policy: it is
// answered without waiting, whatever the policy.
type readKey struct {
	cred                                                                    [sha256.Size]byte
	title, scheme, urlHost, host, uri, contract, accept, language, encoding string
	pol                                                                     Policy
}

// sharedHeaders are the request headers a readKey holds besides the
// credentials: an answer that varies on any other (Vary) is not shared.
var sharedHeaders = []string{"Accept", "Accept-Encoding", "Accept-Language", "X-Xbl-Contract-Version", "Authorization", "Signature", "Cookie"}

// readKeyOf returns req's key, and false when req may not share an answer:
// it is not a plain GET (a body, a Range, a conditional or no-cache
// request, a redirect being followed), the transport cannot read its
// credentials (credentialsOf), it carries a Signer or a Request.Cancel,
// or targetOf cannot spell its URL.
func (t *Transport) readKeyOf(req *http.Request) (readKey, bool) {
	if req.Method != http.MethodGet || (req.Body != nil && req.Body != http.NoBody) || req.Response != nil || !plainRead(req.Header) {
		return readKey{}, false
	}
	if signerOf(req.Context()) != nil { // its Signature is made per attempt, by a key the transport cannot compare
		return readKey{}, false
	}
	// A caller who may give up through the deprecated Request.Cancel does
	// so where no flight sees it: its giving up would end the others' wait
	// with its own error.
	//lint:ignore SA1019 net/http still honours the deprecated Cancel: a caller may give up through it
	if req.Cancel != nil {
		return readKey{}, false
	}
	u, ok := targetOf(req)
	if !ok {
		return readKey{}, false
	}
	cred, ok := credentialsOf(req.Header)
	if !ok {
		return readKey{}, false
	}
	pol := t.policyFor(req.Context())
	pol.BoundBody = false // a shared answer is always read in full under the attempt timeout
	return readKey{cred: cred, title: t.TitleID, scheme: u.scheme, urlHost: u.urlHost, host: u.host, uri: u.uri,
		contract: headerAll(req.Header, "X-Xbl-Contract-Version"), accept: headerAll(req.Header, "Accept"),
		language: headerAll(req.Header, "Accept-Language"), encoding: headerAll(req.Header, "Accept-Encoding"), pol: pol}, true
}

// headerAll is every value of the header name in h, under every spelling
// of it, as net/http sends them (spellings in sorted order, each one's
// values in order), each value after its length, so that two requests that
// send the header differently never have the same text: "" is a header not
// sent, and one sent empty is not "" (a server may tell them apart: an
// empty Accept-Encoding asks for no coding, none for any).
func headerAll(h http.Header, name string) string {
	var keys []string
	for k := range h {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 1 && len(h[keys[0]]) == 1 && h[keys[0]][0] != "" && !strings.Contains(h[keys[0]][0], "\x00") {
		return h[keys[0]][0] // the usual request: one value, which no encoding below spells
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		for _, v := range h[k] {
			b = strconv.AppendInt(append(b, 0), int64(len(v)), 10)
			b = append(append(b, ':'), v...)
		}
	}
	return string(b)
}

// plainRead reports whether h asks for the resource as it is: no Range, no
// condition (If-*: a 304 or 412 answers only the call that asked), and no
// Cache-Control or Pragma of its own (a caller that asks for a fresh
// answer gets one).
func plainRead(h http.Header) bool {
	for k := range h {
		if len(k) > 3 && strings.EqualFold(k[:3], "if-") || strings.EqualFold(k, "Range") ||
			strings.EqualFold(k, "Cache-Control") || strings.EqualFold(k, "Pragma") {
			return false
		}
	}
	return true
}

// credentialsOf returns a SHA-256 digest of the credentials h carries (the
// whole Authorization, Signature and Cookie values), and false when the
// transport cannot read them: an Authorization that is not one "XBL3.0
// x=<userhash>;<token>", or a credential header given more than once
// (under several spellings of its name, or with several values), which a
// server could read otherwise than the transport does.
func credentialsOf(h http.Header) ([sha256.Size]byte, bool) {
	var vals [3][]string // Authorization, Signature, Cookie
	for k, vs := range h {
		for i, name := range []string{"Authorization", "Signature", "Cookie"} {
			if strings.EqualFold(k, name) {
				vals[i] = append(vals[i], vs...)
			}
		}
	}
	if len(vals[0]) != 1 || len(vals[1]) > 1 || len(vals[2]) > 1 {
		return [sha256.Size]byte{}, false
	}
	if _, _, err := xblauth.Parse(vals[0][0]); err != nil {
		return [sha256.Size]byte{}, false
	}
	d := sha256.New()
	for _, vs := range vals {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(vs)))
		d.Write(n[:])
		for _, v := range vs {
			binary.LittleEndian.PutUint64(n[:], uint64(len(v)))
			d.Write(n[:])
			d.Write([]byte(v))
		}
	}
	var sum [sha256.Size]byte
	d.Sum(sum[:0])
	return sum, true
}

// cacheKey is k for the read cache: without the policy.
func (k readKey) cacheKey() readKey {
	k.pol = Policy{}
	return k
}

// owned is k holding strings of its own, for the cache to keep: a field
// net/url or strings.ToLower left as a part of the request's URL would
// keep the whole URL for as long as the entry lives, which size does not
// count.
func (k readKey) owned() readKey {
	for _, f := range []*string{&k.title, &k.scheme, &k.urlHost, &k.host, &k.uri, &k.contract, &k.accept, &k.language, &k.encoding, &k.pol.Rule} {
		*f = strings.Clone(*f)
	}
	return k
}

// size is the bytes k holds, for the cache's bound: each of its strings
// as the allocator gives its copy (owned).
func (k readKey) size() int {
	n := 128
	for _, f := range []string{k.title, k.scheme, k.urlHost, k.host, k.uri, k.contract, k.accept, k.language, k.encoding, k.pol.Rule} {
		n += heapBytes(len(f))
	}
	return n
}
