package transport

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
)

// echoServer answers every request after delay with what the answer may
// depend on, as the server saw it.
func attack46EchoServer(t *testing.T, id string, delay time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, attack46Dump(id, r.Method, r.Host, r.RequestURI, r.Header))
	}))
	t.Cleanup(func() {
		srv.Client().Transport.(*http.Transport).CloseIdleConnections()
		srv.Close()
	})
	return srv
}

func attack46Dump(id, method, host, uri string, h http.Header) string {
	var b strings.Builder
	fmt.Fprintf(&b, "server=%s method=%s host=%s uri=%s", id, method, host, uri)
	for _, k := range []string{"Authorization", "Signature", "Cookie", "Accept", "Accept-Encoding", "Accept-Language", "X-Xbl-Contract-Version"} {
		fmt.Fprintf(&b, " %s=%q", k, h.Values(k))
	}
	return b.String()
}

// attack46Expected is what the echo server would answer req.
func attack46Expected(id string, req *http.Request) string {
	h := http.Header{}
	// In the order net/http writes them (Header.Write sorts the names as
	// spelt), each canonical, as the server reads them.
	for _, k := range slices.Sorted(maps.Keys(req.Header)) {
		for _, v := range req.Header[k] {
			h.Add(k, v)
		}
	}
	if h.Get("Accept-Encoding") == "" && len(h.Values("Accept-Encoding")) == 0 {
		h.Set("Accept-Encoding", "gzip") // net/http asks for gzip itself
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	return attack46Dump(id, req.Method, host, req.URL.RequestURI(), h)
}

// TestAttack46CoalOneUserNeverAnothersAnswer checks, over loopback, the
// CoalesceReads godoc: identical GETs share one request only "with the same
// credentials (the whole Authorization, Signature and Cookie values,
// compared as a SHA-256 digest: never across users, nor across two tokens
// of one user), title, contract version, Accept, Accept-Encoding and
// Accept-Language (every value, under every spelling of the name)", "to
// the same scheme, host and URL"; and ReadCacheTTL: "the same read with
// the same credentials made again within it is answered from memory".
// For each variant of a base read, sent while the base read is under way
// and again after it was cached, the variant's caller must get the answer
// to the request it made.
//
// held: every variant got its own answer, coalesced or cached.
func TestAttack46CoalOneUserNeverAnothersAnswer(t *testing.T) {
	t.Parallel() // its own server and Transport; it waits in real time
	const delay = 150 * time.Millisecond
	srvA := attack46EchoServer(t, "A", delay)
	srvB := attack46EchoServer(t, "B", delay) // another port
	other := mock.Token(xuid2, title)
	tok := mock.Token(xuid1, title)
	uhs := strings.TrimPrefix(strings.SplitN(tok, ";", 2)[0], "XBL3.0 x=")
	base := func() *http.Request {
		req, _ := http.NewRequest("GET", srvA.URL+"/users/me/profile?a=1&b=2", nil)
		req.Header.Set("Authorization", tok)
		req.Header.Set("Accept-Language", "en-US")
		req.Header.Set("X-Xbl-Contract-Version", "2")
		req.Header.Set("Accept", "application/json")
		return req
	}
	variants := []struct {
		name string
		edit func(r *http.Request)
	}{
		{"identical", func(r *http.Request) {}},
		{"another user", func(r *http.Request) { r.Header.Set("Authorization", other) }},
		{"same userhash, another token", func(r *http.Request) { r.Header.Set("Authorization", "XBL3.0 x="+uhs+";another-token") }},
		{"same token, userhash case", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(tok, "XBL3.0 x=", "XBL3.0 X=", 1))
		}},
		{"signature added", func(r *http.Request) { r.Header.Set("Signature", "AAAAAQHZ") }},
		{"lower-case authorization of another user", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.Header["authorization"] = []string{other}
		}},
		{"lower-case authorization, same value", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.Header["authorization"] = []string{tok}
		}},
		{"cookie", func(r *http.Request) { r.Header.Set("Cookie", "s=2") }},
		{"query order", func(r *http.Request) { r.URL.RawQuery = "b=2&a=1" }},
		{"query encoding", func(r *http.Request) { r.URL.RawQuery = "a=%31&b=2" }},
		{"query plus vs space", func(r *http.Request) { r.URL.RawQuery = "a=1+&b=2" }},
		{"accept-language", func(r *http.Request) { r.Header.Set("Accept-Language", "fr-FR") }},
		{"accept-language second value", func(r *http.Request) { r.Header.Add("Accept-Language", "fr-FR") }},
		{"accept-language lower-case spelling", func(r *http.Request) {
			r.Header.Del("Accept-Language")
			r.Header["accept-language"] = []string{"de-DE"}
		}},
		{"contract version", func(r *http.Request) { r.Header.Set("X-Xbl-Contract-Version", "3") }},
		{"contract version lower-case spelling too", func(r *http.Request) { r.Header["x-xbl-contract-version"] = []string{"5"} }},
		{"accept", func(r *http.Request) { r.Header.Set("Accept", "text/plain") }},
		{"accept-encoding identity", func(r *http.Request) { r.Header.Set("Accept-Encoding", "identity") }},
		{"method POST without body", func(r *http.Request) { r.Method = "POST" }},
		{"method lower-case get", func(r *http.Request) { r.Method = "get" }},
		{"host header", func(r *http.Request) { r.Host = "profile.xboxlive.com" }},
		{"host header case", func(r *http.Request) { r.Host = "PROFILE.xboxlive.com" }},
		{"another port", func(r *http.Request) {
			u, _ := url.Parse(srvB.URL)
			r.URL.Host = u.Host
		}},
		{"url fragment", func(r *http.Request) { r.URL.Fragment = "frag" }},
		{"percent-encoded path", func(r *http.Request) { r.URL.RawPath = "/users/me/%70rofile" }},
		{"escaped slash", func(r *http.Request) { r.URL.Path, r.URL.RawPath = "/users/me/profile", "/users%2Fme/profile" }},
		{"trailing slash", func(r *http.Request) { r.URL.Path = "/users/me/profile/" }},
		{"force query", func(r *http.Request) { r.URL.RawQuery, r.URL.ForceQuery = "", true }},
		{"no query", func(r *http.Request) { r.URL.RawQuery = "" }},
	}
	do := func(tr *Transport, req *http.Request) (string, error) {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			vreq := base()
			v.edit(vreq)
			id := "A"
			if vreq.URL.Host != base().URL.Host {
				id = "B"
			}
			want := attack46Expected(id, vreq)
			wantBase := attack46Expected("A", base())

			// 1. while the base read is under way
			tr := &Transport{TitleID: title, CoalesceReads: true, ReadCacheTTL: 5 * time.Second, DisableBudget: true, Base: srvA.Client().Transport}
			var wg sync.WaitGroup
			var gotBase string
			var errBase error
			wg.Add(1)
			go func() { defer wg.Done(); gotBase, errBase = do(tr, base()) }()
			time.Sleep(delay / 3)
			vr := base()
			v.edit(vr)
			got, err := do(tr, vr.WithContext(context.Background()))
			wg.Wait()
			if errBase != nil || gotBase != wantBase {
				t.Errorf("base read: %q, %v; want %q", gotBase, errBase, wantBase)
			}
			if err != nil || got != want {
				t.Errorf("coalesced: the variant's caller got %q, %v\nwant its own answer %q", got, err, want)
			}

			// 2. after the base read's answer was cached
			vr = base()
			v.edit(vr)
			got, err = do(tr, vr)
			if err != nil || got != want {
				t.Errorf("cached: the variant's caller got %q, %v\nwant its own answer %q", got, err, want)
			}
		})
	}
}
