package transport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/xblgo/fgrl/internal/racebuild"
	"github.com/xblgo/fgrl/internal/scaletest"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/transport"
)

// attack70TokenXUID is the signed-in user's (the token's); attack70URLXUID is the
// user the request's URL names.
const (
	attack70TokenXUID = "2533274791234567"
	attack70URLXUID   = "2533274799876543"
)

type attack70RT func(*http.Request) (*http.Response, error)

func (f attack70RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack70429 answers 429 with a body whose limitType and debugMessage are
// quote(r): what the service says of the request it refused.
func attack70429(quote func(*http.Request) string) http.RoundTripper {
	return attack70RT(func(r *http.Request) (*http.Response, error) {
		q := quote(r)
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + strconv.Quote(q) + `,"debugMessage":` + strconv.Quote(q) + `}`
		return &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Header: http.Header{"Retry-After": {"1"}, "Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
	})
}

// attack70QuoteURI quotes the request as the service saw it on the wire.
func attack70QuoteURI(r *http.Request) string { return "refused " + r.URL.RequestURI() }

// attack70ErrURL fails every attempt as http.Client does: a *url.Error quoting
// the URL (req.URL.String()).
func attack70ErrURL() http.RoundTripper {
	return attack70RT(func(r *http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: r.URL.String(), Err: errors.New("connection reset by peer")}
	})
}

// attack70ErrText fails every attempt with an error whose text is text(r).
func attack70ErrText(text func(*http.Request) string) http.RoundTripper {
	return attack70RT(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New(text(r))
	})
}

// attack70Call makes one call of req through a Transport with base and returns
// every text the promise covers: each Event's Err and Body texts, the
// returned error's (and a ThrottleError's Body), the Logger's output.
func attack70Call(t *testing.T, base http.RoundTripper, req *http.Request) (texts []string) {
	t.Helper()
	var mu sync.Mutex
	var logBuf bytes.Buffer
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e transport.Event) {
			mu.Lock()
			defer mu.Unlock()
			s := fmt.Sprintf("event %s scope=%s", e.Kind, e.Scope)
			if e.Err != nil {
				s += " err=" + e.Err.Error()
			}
			if e.Body != nil {
				s += " body=" + e.Body.LimitType + " | " + e.Body.DebugMessage + " | " + e.Body.Aspect
			}
			texts = append(texts, s)
		}}
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", mock.Token(attack70TokenXUID, "1234567890"))
	}
	resp, err := tr.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		texts = append(texts, "error: "+err.Error())
		var te *transport.ThrottleError
		if errors.As(err, &te) && te.Body != nil {
			texts = append(texts, "error body: "+te.Body.LimitType+" | "+te.Body.DebugMessage+" | "+te.Body.Aspect)
		}
	}
	texts = append(texts, "log: "+logBuf.String())
	return texts
}

func attack70Get(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// attack70Leaks reports each text that holds one of leaks (ASCII case folded).
func attack70Leaks(t *testing.T, name string, texts []string, leaks ...string) {
	t.Helper()
	if len(texts) < 2 {
		t.Fatalf("%s: setup: no events (%v)", name, texts)
	}
	for _, s := range texts {
		for _, l := range leaks {
			if strings.Contains(strings.ToLower(s), strings.ToLower(l)) {
				t.Errorf("%s: names the user (%q): %s", name, l, s)
			}
		}
	}
}

// attack70Has reports each want that no text holds.
func attack70Has(t *testing.T, name string, texts []string, wants ...string) {
	t.Helper()
	all := strings.Join(texts, "\n")
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("%s: %q lost: %s", name, w, all)
		}
	}
}

// attack70XUIDs returns n distinct XUID-long numbers.
func attack70XUIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("25332747900%05d", i)
	}
	return out
}

// BREAK. Promise (transport.Event): "It names the service, never the user:
// no userhash, token or XUID (a 429's text and an error's are scrubbed of
// the users the request's URL names: its path's xuid(…), xuids(…), gt(…),
// gamertag(…) and XUIDs, its query's xuid, xuids, gt and gamertag ...)".
// A path naming more than 32 users (people hub's xuids(…) of 33 friends)
// makes urlUsers return the path whole before it reads the query: the
// query's gamertag is never taken. A 429 quoting the request and a Base
// error quoting the URL both keep "gamertag=Major%20Nelson1" in Event.Body,
// Event.Err, the returned error and the Logger's output.
func TestAttack70PastMaxPathSkipsQueryUsers(t *testing.T) {
	u := "https://peoplehub.xboxlive.com/users/me/people/xuids(" + strings.Join(attack70XUIDs(33), ",") +
		")/decoration/detail?gamertag=Major%20Nelson1"
	leaks := []string{"Major%20Nelson1", "Major Nelson1", "Major+Nelson1"}
	attack70Leaks(t, "429", attack70Call(t, attack70429(attack70QuoteURI), attack70Get(t, u)), leaks...)
	attack70Leaks(t, "err", attack70Call(t, attack70ErrURL(), attack70Get(t, u)), leaks...)
}

// held: the same query user, with a path naming one user only, is
// scrubbed (the control for TestAttack70PastMaxPathSkipsQueryUsers).
func TestAttack70QueryUserWithShortPathScrubbed(t *testing.T) {
	u := "https://peoplehub.xboxlive.com/users/me/people/xuids(" + attack70URLXUID + ")/decoration/detail?gamertag=Major%20Nelson1"
	leaks := []string{"Major%20Nelson1", "Major Nelson1", "Major+Nelson1", attack70URLXUID}
	attack70Leaks(t, "429", attack70Call(t, attack70429(attack70QuoteURI), attack70Get(t, u)), leaks...)
	attack70Leaks(t, "err", attack70Call(t, attack70ErrURL(), attack70Get(t, u)), leaks...)
}

// BREAK. Promise (transport.Event): "a 429's text and an error's are
// scrubbed of the users the request's URL names: its path's xuid(…),
// xuids(…), gt(…), gamertag(…) ...". Past 32 users the path is taken only
// whole: a 429 that names one of the users (not the whole path) keeps it,
// and so does an error that quotes one user's selector. Here a path of 40
// gamertags (each 12 bytes, long enough to be taken alone below 32 users)
// and a 429 "no quota left for gamertag(GamerNumber33)"; and a path of 33
// XUIDs with a Base error quoting "xuid(<the 33rd>)".
func TestAttack70PastMaxPathOneUserQuoted(t *testing.T) {
	var gts []string
	for i := 1; i <= 40; i++ {
		gts = append(gts, fmt.Sprintf("GamerNumber%02d", i))
	}
	u := "https://peoplehub.xboxlive.com/users/me/people/gamertags(" + strings.Join(gts, ",") + ")/decoration/detail"
	quote := func(*http.Request) string { return "no quota left for gamertag(GamerNumber33)" }
	attack70Leaks(t, "429", attack70Call(t, attack70429(quote), attack70Get(t, u)), "GamerNumber33")

	xs := attack70XUIDs(33)
	u = "https://peoplehub.xboxlive.com/users/me/people/xuids(" + strings.Join(xs, ",") + ")/decoration/detail"
	errText := func(*http.Request) string { return "upstream refused xuid(" + xs[32] + ")" }
	attack70Leaks(t, "err", attack70Call(t, attack70ErrText(errText), attack70Get(t, u)), xs[32])
}

// held: below 32 users the same quote of one user is scrubbed (the
// control for TestAttack70PastMaxPathOneUserQuoted).
func TestAttack70UnderMaxPathOneUserQuoted(t *testing.T) {
	var gts []string
	for i := 1; i <= 32; i++ {
		gts = append(gts, fmt.Sprintf("GamerNumber%02d", i))
	}
	u := "https://peoplehub.xboxlive.com/users/me/people/gamertags(" + strings.Join(gts, ",") + ")/decoration/detail"
	quote := func(*http.Request) string { return "no quota left for gamertag(GamerNumber31)" }
	attack70Leaks(t, "429", attack70Call(t, attack70429(quote), attack70Get(t, u)), "GamerNumber31")
}

// BREAK. Promise (transport.Event): "a 429's text ... [is] scrubbed of
// the users the request's URL names: its path's ... gt(…) ..." (commit
// be9b541: selectors "taken whole so short gamertags go too"). A short
// gamertag's selector is taken only as its segment whole: when the segment
// holds more than the selector (a matrix parameter, "gt(Bob);v=2", or a
// second selector, "gt(Al),gt(Bo)"), a 429 naming the user by its selector
// alone ("gt(Bob)", "gt(Bo)") keeps it.
func TestAttack70ShortGamertagSelectorInLongerSegment(t *testing.T) {
	for _, tc := range []struct{ url, quote, leak string }{
		{"https://profile.xboxlive.com/users/gt(Bob);v=2/profile/settings?settings=Gamertag", "no quota left for gt(Bob)", "gt(Bob)"},
		{"https://profile.xboxlive.com/users/gt(Al),gt(Bo)/profile/settings?settings=Gamertag", "no quota left for gt(Bo)", "gt(Bo)"},
	} {
		quote := func(*http.Request) string { return tc.quote }
		attack70Leaks(t, tc.url, attack70Call(t, attack70429(quote), attack70Get(t, tc.url)), tc.leak)
	}
}

// held: the selector alone as its segment, quoted alone, is scrubbed (the
// control for TestAttack70ShortGamertagSelectorInLongerSegment).
func TestAttack70ShortGamertagSelectorAloneScrubbed(t *testing.T) {
	u := "https://profile.xboxlive.com/users/gt(Bob)/profile/settings?settings=Gamertag"
	quote := func(*http.Request) string { return "no quota left for gt(Bob)" }
	attack70Leaks(t, u, attack70Call(t, attack70429(quote), attack70Get(t, u)), "gt(Bob)")
}

// BREAK. Promise (transport.Event): "an error's [text is] scrubbed of the
// users the request's URL names: its path's xuid(…), ... gt(…) ...". A
// selector nested in another's parentheses ("batch(xuid(…))") is never
// read: segmentUsers takes the text up to the first ')' as the outer
// selector's value and goes on after it. The XUID stays in Event.Err, the
// returned error and the Logger's output (an error's text loses no
// XUID-long number by itself), and a long gamertag stays in a 429's text.
func TestAttack70NestedSelector(t *testing.T) {
	u := "https://profile.xboxlive.com/users/batch(xuid(" + attack70URLXUID + "))/profile/settings"
	attack70Leaks(t, "err "+u, attack70Call(t, attack70ErrURL(), attack70Get(t, u)), attack70URLXUID)
	u = "https://profile.xboxlive.com/users/batch(gt(Major%20Nelson))/profile/settings"
	attack70Leaks(t, "429 "+u, attack70Call(t, attack70429(attack70QuoteURI), attack70Get(t, u)), "Major%20Nelson", "Major Nelson")
}

// BREAK. Promise (transport.Event): "a 429's text and an error's are
// scrubbed of the users the request's URL names: its path's xuid(…), ...".
// A URL whose path is in Opaque (net/url's documented way to send a path
// as written; net/http sends Opaque as the request target) names its users
// there; urlUsers reads EscapedPath, which ignores Opaque. The XUID stays
// in Event.Err (a Base quoting req.URL.String()), and a long gamertag in a
// 429 quoting the request target.
func TestAttack70OpaquePathUsers(t *testing.T) {
	req := attack70Get(t, "https://profile.xboxlive.com/")
	req.URL.Path, req.URL.Opaque = "", "//profile.xboxlive.com/users/xuid("+attack70URLXUID+")/profile/settings"
	attack70Leaks(t, "err", attack70Call(t, attack70ErrURL(), req), attack70URLXUID)

	req = attack70Get(t, "https://profile.xboxlive.com/")
	req.URL.Path, req.URL.Opaque = "", "//profile.xboxlive.com/users/gt(Major%20Nelson)/profile/settings"
	attack70Leaks(t, "429", attack70Call(t, attack70429(attack70QuoteURI), req), "Major%20Nelson", "Major Nelson")
}

// BREAK (arguable: net/url and Go's server do not split a query at ';').
// Promise (transport.Event): "an error's [text is] scrubbed of the users
// the request's URL names: ... its query's xuid, xuids, gt and gamertag".
// A query separated by ';' (the W3C form many servers still split at, and
// one xblauth.URLSecrets itself splits at: "however they are separated")
// names the user in "xuid=": urlUsers splits at '&' only, reads the pair as
// "maxItems" and leaves the XUID in Event.Err and the Logger's output.
func TestAttack70SemicolonQueryUser(t *testing.T) {
	u := "https://leaderboards.xboxlive.com/scids/00000000-0000-0000-0000-000012345678/leaderboards/Kills?maxItems=10;xuid=" + attack70URLXUID
	attack70Leaks(t, "err", attack70Call(t, attack70ErrURL(), attack70Get(t, u)), attack70URLXUID)
}

// BREAK. Promise (transport.Event): "It names the service, never the user"
// and the 429's text is "scrubbed of the users the request's URL names:
// its path's ... gt(…)". Gamertags are matched by the service without
// case; a request naming a non-ASCII gamertag in lower case
// ("gt(äöüäöüxyz)") gets a 429 naming the user as the service spells it
// ("ÄÖÜÄÖÜxyz"). Scrub folds ASCII letters only, so the user stays in
// Event.Body and the ThrottleError.
func TestAttack70NonASCIIGamertagOtherCase(t *testing.T) {
	u := "https://profile.xboxlive.com/users/gt(" + url.PathEscape("äöüäöüxyz") + ")/profile/settings"
	quote := func(*http.Request) string { return "no quota left for ÄÖÜÄÖÜxyz" }
	attack70Leaks(t, u, attack70Call(t, attack70429(quote), attack70Get(t, u)), "ÄÖÜÄÖÜxyz")
}

// held: a 429's text keeps its meaning: a debugMessage whose numbers are
// counts, limits and a 14-digit number, and a limitType naming a scope,
// keep every word and number; an error from a non-URL cause keeps its
// words. The request names a user by xuid(…) and gt(…).
func TestAttack70ScrubKeepsMeaning(t *testing.T) {
	u := "https://presence.xboxlive.com/users/xuid(" + attack70URLXUID + ")/devices/current/titles/current?gt=MajorNelson1"
	req := attack70Get(t, u)
	req.Method = "POST"
	req.Body, req.GetBody = io.NopCloser(strings.NewReader("{}")), func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("{}")), nil }
	base := attack70RT(func(r *http.Request) (*http.Response, error) {
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate presence/write","debugMessage":"11 of 10 requests in 15 s; 300 per 300 s; window 17335600000000 (14 digits)"}`
		return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	})
	texts := attack70Call(t, base, req)
	attack70Has(t, "429", texts, "Rate presence/write", "11 of 10 requests in 15 s; 300 per 300 s; window 17335600000000 (14 digits)")

	errBase := attack70ErrText(func(*http.Request) string { return "dial tcp 10.0.0.1:443: connect: connection refused" })
	texts = attack70Call(t, errBase, attack70Get(t, u))
	attack70Has(t, "err", texts, "dial tcp 10.0.0.1:443: connect: connection refused")
}

// held: a 429 of a request naming no user in its URL (a batch's users are
// in its body) loses every run of 15 or more digits from its text, and
// keeps a 14-digit one.
func TestAttack70HideXUIDLongRuns(t *testing.T) {
	u := "https://profile.xboxlive.com/users/batch/profile/settings"
	quote := func(*http.Request) string {
		return "batch users " + attack70URLXUID + ",123456789012345,x12345678901234567890y; id 12345678901234"
	}
	texts := attack70Call(t, attack70429(quote), attack70Get(t, u))
	attack70Leaks(t, u, texts, attack70URLXUID, "123456789012345", "12345678901234567890")
	attack70Has(t, u, texts, "id 12345678901234")
}

// held: malformed URLs do not panic the transport: a RawPath that is no
// encoding of Path, an opaque URL with no path, a URL with no host, a nil
// URL.
func TestAttack70MalformedURLNoPanic(t *testing.T) {
	mk := func(f func(*http.Request)) *http.Request {
		req := attack70Get(t, "https://profile.xboxlive.com/users/xuid("+attack70URLXUID+")/profile/settings")
		f(req)
		return req
	}
	for name, req := range map[string]*http.Request{
		"bad RawPath":   mk(func(r *http.Request) { r.URL.RawPath = "/users/%zz(" + attack70URLXUID + ")/%" }),
		"other RawPath": mk(func(r *http.Request) { r.URL.RawPath = "/users/gt%28Bob%29/x" }),
		"opaque empty":  mk(func(r *http.Request) { r.URL.Opaque, r.URL.Path, r.URL.RawPath = "x", "", "" }),
		"no host":       mk(func(r *http.Request) { r.URL.Host = "" }),
		"nil URL":       mk(func(r *http.Request) { r.URL = nil }),
		"bad RawQuery":  mk(func(r *http.Request) { r.URL.RawQuery = "xuid=%zz&gt=%&=&&xuids=%2C%2C" }),
	} {
		for _, base := range []http.RoundTripper{attack70ErrURL(), attack70429(attack70QuoteURI)} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s: panic: %v", name, p)
					}
				}()
				tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1, Observe: func(context.Context, transport.Event) {}}
				r := req.Clone(context.Background())
				r.Header.Set("Authorization", mock.Token(attack70TokenXUID, "1234567890"))
				if resp, err := tr.RoundTrip(r); err == nil {
					resp.Body.Close()
				}
			}()
		}
	}
}

// attack70Scrub makes one call of rawURL through a Transport whose Base fails
// quoting the URL.
func attack70Scrub(t *testing.T, rawURL string) {
	t.Helper()
	tr := &transport.Transport{Base: attack70ErrURL(), TitleID: "1234567890", RetryWindow: -1, DisableBudget: true,
		Observe: func(context.Context, transport.Event) {}}
	req := attack70Get(t, rawURL)
	req.Header.Set("Authorization", mock.Token(attack70TokenXUID, "1234567890"))
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("setup: no error")
	}
}

// attack70Growth measures the scrub of mk(small) against mk(large),
// alternately (internal/scaletest: CI runs this beside its fuzzing, whose
// load once made one 33x, and later 35.8x, for 10x the input).
func attack70Growth(t *testing.T, mk func(int) string, small, large int) scaletest.Growth {
	t.Helper()
	us, ul := mk(small), mk(large)
	return scaletest.Measure(3, func() { attack70Scrub(t, us) }, func() { attack70Scrub(t, ul) })
}

// BREAK. The scrub should stay linear (commit be9b541: "past 32 of them
// the path whole (the scrub stays linear)"; xblauth.URLSecrets: "in time
// linear in the URL"). A query pair of a user parameter whose value names
// no user ("gt=,") counts no user toward the 32 but is appended whole as a
// secret: a query of n such pairs makes 2n secrets, each scanned over the
// whole error text (the URL): n × |URL|. 10x the pairs should take at most
// 30x the time (a quadratic scrub 100x, under the race detector too). Measured: 20,000 pairs (100 KB URL) 0.32 s; 200,000 pairs
// (1 MB URL) 16.1 s, 51x; another run 0.59 s / 18.2 s, 31x (a 1 MB URL
// of "a=b" pairs: 0.2 s).
func TestAttack70EmptyUserPairsScrubScales(t *testing.T) {
	racebuild.Skip(t, "a test of times")
	mkURL := func(n int) string {
		return "https://leaderboards.xboxlive.com/scids/00000000-0000-0000-0000-000012345678/leaderboards/Kills?maxItems=10" +
			strings.Repeat("&gt=,", n)
	}
	g := attack70Growth(t, mkURL, 5000, 50000)
	t.Logf("5,000 pairs, then 50,000: %v", g)
	if g.Ratio() > 30 && g.Large() > 100*time.Millisecond {
		t.Errorf("scrub superlinear for 10x the pairs: %v", g)
	}
}

// held: 1 MB URLs of '(' characters, of "gt(a)" selectors, of user query
// pairs and of one huge xuid((((…) value are scrubbed in linear time (10x
// the input, at most 30x the time, a quadratic scrub 100x).
func TestAttack70HugeURLScrubScales(t *testing.T) {
	racebuild.Skip(t, "a test of sizes, times or heap figures")
	for name, mk := range map[string]func(n int) string{
		"parens": func(n int) string {
			return "https://profile.xboxlive.com/users/xuid(" + attack70URLXUID + ")/x/" + strings.Repeat("(", n) + "/y"
		},
		"open selectors": func(n int) string {
			return "https://profile.xboxlive.com/users/" + strings.Repeat("gt(", n/3) + "/y"
		},
		"selectors": func(n int) string {
			return "https://profile.xboxlive.com/users/" + strings.Repeat("gt(a)", n/5) + "/y"
		},
		"one huge value": func(n int) string {
			return "https://profile.xboxlive.com/users/xuid(" + strings.Repeat("(", n) + ")/y"
		},
		"query pairs": func(n int) string {
			return "https://profile.xboxlive.com/users/me/profile?" + strings.Repeat("a=b&", n/4) + "xuid=" + attack70URLXUID
		},
	} {
		g := attack70Growth(t, mk, 25_000, 250_000)
		t.Logf("%s: 25,000 then 250,000: %v", name, g)
		if g.Ratio() > 30 && g.Large() > 100*time.Millisecond {
			t.Errorf("%s: superlinear for 10x the input: %v", name, g)
		}
	}
}
