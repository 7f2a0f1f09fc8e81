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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/transport"
)

// Outside attack 187: transport's user scrubbing (secrets.go: sentSecrets,
// scrubSent, urlUsers, textUsers, findUsers) as an outsider sees it, in
// Events, returned errors, a ThrottleError's Body and the Logger's output.

const (
	attack76TokenXUID = "2533274791234567"
	attack76Gamertag  = "MajorNelson1" // 12 bytes: long enough to be taken alone
)

type attack76RT func(*http.Request) (*http.Response, error)

func (f attack76RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// attack76429Lit answers 429 with a body whose limitType, debugMessage and
// aspect are the raw JSON string literal lit (already quoted and escaped).
func attack76429Lit(lit string) http.RoundTripper {
	return attack76RT(func(r *http.Request) (*http.Response, error) {
		body := `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":` + lit + `,"debugMessage":` + lit + `,"aspect":` + lit + `}`
		return &http.Response{StatusCode: 429, Status: "429 Too Many Requests", Header: http.Header{"Retry-After": {"7"}, "Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: r, ProtoMajor: 1, ProtoMinor: 1}, nil
	})
}

// attack76429 answers 429 with text (JSON-encoded once) as its body's texts.
func attack76429(text string) http.RoundTripper { return attack76429Lit(strconv.Quote(text)) }

// attack76Err fails every attempt with an error whose text is text.
func attack76Err(text string) http.RoundTripper {
	return attack76RT(func(*http.Request) (*http.Response, error) { return nil, errors.New(text) })
}

// attack76Call makes one call of req through a Transport with base and
// returns every text the promise covers: each Event's Err and Body texts
// (and its Status, Wait, Reason, Scope), the returned error's (and a
// ThrottleError's Body), the Logger's output.
func attack76Call(t *testing.T, base http.RoundTripper, req *http.Request) (texts []string) {
	t.Helper()
	var mu sync.Mutex
	var logBuf bytes.Buffer
	tr := &transport.Transport{Base: base, TitleID: "1234567890", RetryWindow: -1,
		Logger: slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: func(_ context.Context, e transport.Event) {
			mu.Lock()
			defer mu.Unlock()
			s := fmt.Sprintf("event %s scope=%s status=%d wait=%v reason=%q", e.Kind, e.Scope, e.Status, e.Wait, e.Reason)
			if e.Err != nil {
				s += " err=" + e.Err.Error()
			}
			if e.Body != nil {
				s += " body=" + e.Body.LimitType + " | " + e.Body.DebugMessage + " | " + e.Body.Aspect
			}
			texts = append(texts, s)
		}}
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", mock.Token(attack76TokenXUID, "1234567890"))
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
	mu.Lock()
	defer mu.Unlock()
	texts = append(texts, "log: "+logBuf.String())
	return texts
}

func attack76Get(t *testing.T, rawURL string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// attack76Batch is a request that names no user in its URL (a batch names
// its users in its body, which the transport does not read).
const attack76Batch = "https://profile.xboxlive.com/users/batch/profile/settings"

// attack76Leaks reports each text that holds one of leaks (ASCII case folded).
func attack76Leaks(t *testing.T, name string, texts []string, leaks ...string) {
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

// attack76Has reports each want that no text holds.
func attack76Has(t *testing.T, name string, texts []string, wants ...string) {
	t.Helper()
	all := strings.Join(texts, "\n")
	for _, w := range wants {
		if !strings.Contains(all, w) {
			t.Errorf("%s: %q lost: %s", name, w, all)
		}
	}
}

// BREAK. Promise (transport.Event): "a 429's text and an error's are
// scrubbed of the users the request's URL names: ... its query's xuid,
// xuids, gt and gamertag". A gamertag with a space, as a query sends it
// (?gamertag=Major%20Nelson1 or Major+Nelson1), is the user "Major
// Nelson1"; urlUsers decodes the query, but findUsers ends a pair's value
// at the space, so only "gamertag=Major" and the still-encoded
// "Major%20Nelson1" are kept. A 429 or an error naming the user as the
// service knows it ("Major Nelson1") keeps it in Event.Body, Event.Err,
// the returned error and the Logger's output. (The same user in the path,
// gt(Major%20Nelson1), is scrubbed: TestAttack76PathGamertagWithSpaceScrubbed.)
func TestAttack76QueryGamertagWithSpace(t *testing.T) {
	for _, q := range []string{"gamertag=Major%20Nelson1", "gt=Major+Nelson1"} {
		u := "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag&" + q
		attack76Leaks(t, "429 "+q, attack76Call(t, attack76429("no quota left for Major Nelson1"), attack76Get(t, u)), "Major Nelson1", "Nelson1")
		attack76Leaks(t, "err "+q, attack76Call(t, attack76Err(`Get "https://profile.xboxlive.com/users/me/profile/settings?gt=Major Nelson1": reset`), attack76Get(t, u)), "Major Nelson1", "Nelson1")
	}
}

// held: the same gamertag named in the path's selector is scrubbed from a
// 429's and an error's text (control of TestAttack76QueryGamertagWithSpace).
func TestAttack76PathGamertagWithSpaceScrubbed(t *testing.T) {
	u := "https://profile.xboxlive.com/users/gt(Major%20Nelson1)/profile/settings"
	attack76Leaks(t, "429", attack76Call(t, attack76429("no quota left for Major Nelson1"), attack76Get(t, u)), "Major Nelson1", "Nelson1")
	attack76Leaks(t, "err", attack76Call(t, attack76Err("upstream refused Major Nelson1"), attack76Get(t, u)), "Major Nelson1", "Nelson1")
}

// BREAK. Promise (commit c219af7 / Event): the users "the scrubbed text
// itself" names are scrubbed: "query pairs" (findUsers: "a user
// parameter's values (such a name before '=', its value up to '&', ';',
// '#', a space, a quote or '<')"). A pair in parentheses, or at a line's
// end, runs on past its user: "(gt=MajorNelson1)" is taken as the user
// "MajorNelson1)", "gt=MajorNelson1\nretry" as "MajorNelson1\nretry".
// The user the pair names is then kept wherever else the text names it.
func TestAttack76TextPairValueRunsOn(t *testing.T) {
	for _, text := range []string{
		"refused (gt=" + attack76Gamertag + "): " + attack76Gamertag + " has no quota left",
		"refused gt=" + attack76Gamertag + "\nretry later for " + attack76Gamertag,
		"refused <user gt=" + attack76Gamertag + "> " + attack76Gamertag,
		"refused gt=" + attack76Gamertag + ")/profile; user " + attack76Gamertag,
	} {
		attack76Leaks(t, "429 "+strconv.Quote(text), attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), attack76Gamertag)
		attack76Leaks(t, "err "+strconv.Quote(text), attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), attack76Gamertag)
	}
}

// held: a pair ended by a space, '&', ';' or a quote is taken as its
// user, and the user goes wherever the text names it.
func TestAttack76TextPairScrubbedEverywhere(t *testing.T) {
	for _, text := range []string{
		"refused gt=" + attack76Gamertag + " : " + attack76Gamertag + " has no quota left",
		"refused ?gt=" + attack76Gamertag + "&v=2; " + attack76Gamertag,
		"refused 'gamertag=" + attack76Gamertag + "' " + attack76Gamertag,
		"refused xuids=" + attack76Gamertag + ",OtherGamer99 " + attack76Gamertag + " OtherGamer99",
	} {
		attack76Leaks(t, "429 "+strconv.Quote(text), attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), attack76Gamertag, "OtherGamer99")
		attack76Leaks(t, "err "+strconv.Quote(text), attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), attack76Gamertag, "OtherGamer99")
	}
}

// BREAK (over-scrubbing). Promise (transport.Event): an error's and a
// 429's text "are scrubbed of the users" (findUsers: "a user parameter's
// values"), and the Event keeps naming the service. A user pair followed
// by other pairs with commas only between them, as key=value lists are
// often written ("xuid=…,status=429,retryAfter=30,scope=presence/write"),
// makes every later pair a "user" (the value is split at commas): the
// status, the Retry-After and the scope are lost ("xuid=[redacted],
// [redacted],[redacted],[redacted]"), though no gamertag or XUID holds '='.
// ("xuid=…,httpStatus=429,retryAfter=30,scope=presence/write" in a Base's
// error and in a 429's debugMessage.)
func TestAttack76PairListOverScrubs(t *testing.T) {
	text := "throttled xuid=2533274790395904,httpStatus=429,retryAfter=30,scope=presence/write"
	wants := []string{"httpStatus=429", "retryAfter=30", "scope=presence/write"}
	texts := attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch))
	attack76Leaks(t, "err", texts, "2533274790395904")
	attack76Has(t, "err", texts, wants...)
	texts = attack76Call(t, attack76429(text), attack76Get(t, attack76Batch))
	attack76Leaks(t, "429", texts, "2533274790395904")
	attack76Has(t, "429", texts, wants...)
}

// BREAK (over-scrubbing; arguable). Brief: "a selector must be exactly
// one of the names" (findUsers: "a letter run that is a user selector");
// userParam's list: "xuid", "xuids", "gt", "gamertag", "gamertags". An
// identifier that ends in one of them after '_' or a digit
// ("count_gt(300)", "rule2gt(300)") is no selector, yet its tail is taken
// for one: "count_[redacted]", and the count 300 is lost from an error's
// and a 429's text.
func TestAttack76IdentifierTailTakenForSelector(t *testing.T) {
	for _, text := range []string{"rule count_gt(300) exceeded", "rule rule2gt(300) exceeded"} {
		attack76Has(t, "err", attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), text)
		attack76Has(t, "429", attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), text)
	}
}

// held: words that only begin or end like a selector ("gtx(", "xuidLookup(",
// "bigt(", "mygamertag(") are not taken for one: an error's and a 429's
// text keep them, with their counts; and a legit text keeps its status,
// scope, counts and Retry-After.
func TestAttack76LegitWordsKept(t *testing.T) {
	for _, text := range []string{
		"gtx(300) failed; xuidLookup(42) failed; bigt(7) ok; mygamertag(12345678) ok",
		"429 on presence/write: 11 of 10 in 15 s; Retry-After 30; count=300",
	} {
		attack76Has(t, "err", attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), text)
		texts := attack76Call(t, attack76429(text), attack76Get(t, attack76Batch))
		attack76Has(t, "429", texts, text, "status=429", "wait=7s")
	}
}

// BREAK. Promise (commit c219af7 / Event): users the text names by
// "query pairs" are scrubbed, and findUsers reads a selector's '(' as
// '(' or "%28" (a percent-encoded quote of a request). A pair whose '=' is
// percent-encoded, as a URL quoted inside another URL's query is
// ("returnUrl=...%3Fgt%3DMajorNelson1"), is not read: the gamertag stays
// in the 429's text and the error's.
func TestAttack76PercentEncodedPairInText(t *testing.T) {
	for _, text := range []string{
		"refused /auth?returnUrl=https%3A%2F%2Fprofile.xboxlive.com%2Fusers%2Fme%3Fgt%3D" + attack76Gamertag,
		"refused gamertag%3D" + attack76Gamertag,
	} {
		attack76Leaks(t, "429 "+text, attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), attack76Gamertag)
		attack76Leaks(t, "err "+text, attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), attack76Gamertag)
	}
}

// held: a selector with its parentheses percent-encoded ("gt%28…%29") and a
// JSON-escaped one in a 429's body (gt\u0028…\u0029, decoded before the
// scrub) are read.
func TestAttack76EncodedSelectorsRead(t *testing.T) {
	text := "refused gt%28" + attack76Gamertag + "%29"
	attack76Leaks(t, "429 %28", attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), attack76Gamertag)
	attack76Leaks(t, "err %28", attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), attack76Gamertag)
	lit := `"refused gt\u0028` + attack76Gamertag + `\u0029"`
	attack76Leaks(t, "429 \\u0028", attack76Call(t, attack76429Lit(lit), attack76Get(t, attack76Batch)), attack76Gamertag)
}

// BREAK (arguable: spellings of the selector other than "name(").
// Promise (commit c219af7 / Event): the users "the scrubbed text itself"
// names are scrubbed, by "selectors in any case" (xuid(…), gt(…),
// gamertag(…), …). findUsers reads only '(' or "%28" right after the name:
// a text that spells the selector with a space before '(' ("gamertag
// (MajorNelson1)"), with full-width parentheses ("gt（…）"), HTML-escaped
// ("gt&#40;…&#41;", "gt&lpar;…"), or JSON-escaped inside the decoded text
// (a 429 whose debugMessage quotes a JSON document: gt\u0028…\u0029)
// keeps the gamertag.
func TestAttack76SelectorSpellings(t *testing.T) {
	for _, text := range []string{
		"no quota left for gamertag (" + attack76Gamertag + ")",
		"no quota left for gt（" + attack76Gamertag + "）",
		"no quota left for gt&#40;" + attack76Gamertag + "&#41;",
		"no quota left for gt&lpar;" + attack76Gamertag + "&rpar;",
		`no quota left: {"path":"/users/gt\u0028` + attack76Gamertag + `\u0029/profile"}`,
	} {
		attack76Leaks(t, "429 "+text, attack76Call(t, attack76429(text), attack76Get(t, attack76Batch)), attack76Gamertag)
		attack76Leaks(t, "err "+text, attack76Call(t, attack76Err(text), attack76Get(t, attack76Batch)), attack76Gamertag)
	}
}

// Helper 187's TestAtk187ErrorTextChangesBetweenCalls (an error whose
// Error() names a user only from its second call, passed on unscrubbed) is
// judged: scrubSent reads the text once, as xblauth.ScrubError reads each
// error's; an error whose text changes as it is read is a Base's own.

// held: an error whose text is the same on every call, naming the user the
// same way, is scrubbed (control of TestAttack76ErrorTextChangesBetweenCalls).
func TestAttack76ErrorTextStableScrubbed(t *testing.T) {
	base := attack76Err("connection reset; refused gamertag(" + attack76Gamertag + ")")
	attack76Leaks(t, "stable", attack76Call(t, base, attack76Get(t, attack76Batch)), attack76Gamertag)
}

// attack76Store is a shared budget store that fails, quoting the key it was
// given (as stores that name what they failed on do).
type attack76Store struct{ throttle.BudgetStore }

func (s attack76Store) Reserve(ctx context.Context, k throttle.Key, l throttle.Limit, now time.Time, maxWait time.Duration) (throttle.Admission, error) {
	return throttle.Admission{}, fmt.Errorf("store: reserve fgrl:%s:%s:%s: connection refused", k.User, k.Title, k.Scope)
}

// BREAK. Promise (transport.Event): "It names the service, never the
// user: no userhash, token or XUID". EventBudgetError's Err is the shared
// store's error as it came: a store that names the key it failed on
// names the userhash (and the Logger's Warn line quotes it too, though the
// logs are allowed the userhash).
func TestAttack76BudgetErrorNamesUserhash(t *testing.T) {
	uhs := mock.UserHash(attack76TokenXUID)
	var errs []string
	tr := &transport.Transport{Base: attack76Err("reset"), TitleID: "1234567890", RetryWindow: -1,
		Budget: attack76Store{&throttle.MemoryBudgetStore{}},
		Observe: func(_ context.Context, e transport.Event) {
			if e.Kind == transport.EventBudgetError && e.Err != nil {
				errs = append(errs, e.Err.Error())
			}
		}}
	req := attack76Get(t, "https://profile.xboxlive.com/users/me/profile/settings")
	req.Header.Set("Authorization", mock.Token(attack76TokenXUID, "1234567890"))
	if resp, err := tr.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	if len(errs) == 0 {
		t.Fatal("setup: no EventBudgetError")
	}
	for _, s := range errs {
		if strings.Contains(s, uhs) {
			t.Errorf("EventBudgetError names the userhash %s: %s", uhs, s)
		}
	}
}

// held: a 429's text that echoes the request's headers (its Authorization:
// the userhash and token) and its own Retry-After keeps neither the
// userhash nor the token (the Logger's user field is the userhash by
// design: "Only the userhash names the user"), and keeps the Retry-After,
// status and counts.
func TestAttack76EchoedHeadersScrubbed(t *testing.T) {
	auth := mock.Token(attack76TokenXUID, "1234567890")
	uhs := mock.UserHash(attack76TokenXUID)
	_, tok, _ := strings.Cut(auth, ";")
	text := "refused; Authorization: " + auth + "; Retry-After: 7; 11 of 10"
	req := attack76Get(t, attack76Batch)
	req.Header.Set("Authorization", auth)
	noUserField := func(texts []string) []string {
		for i := range texts {
			texts[i] = strings.ReplaceAll(texts[i], "user="+uhs, "user=USERHASH")
		}
		return texts
	}
	texts := noUserField(attack76Call(t, attack76429(text), req))
	attack76Leaks(t, "429", texts, uhs, tok)
	attack76Has(t, "429", texts, "Retry-After: 7; 11 of 10", "status=429", "wait=7s")
	req = attack76Get(t, attack76Batch)
	req.Header.Set("Authorization", auth)
	texts = noUserField(attack76Call(t, attack76Err(text), req))
	attack76Leaks(t, "err", texts, uhs, tok)
	attack76Has(t, "err", texts, "Retry-After: 7; 11 of 10")
}

// held: hostile 429 bodies do not panic or hang, and keep the status and
// Retry-After: 1 MiB of selectors (over ratelimit.MaxBodySize: no Body),
// and a body just under the limit whose debugMessage is selectors only
// (past 64 users the text goes whole); neither names a user.
func TestAttack76Hostile429Bodies(t *testing.T) {
	huge := `{"maxRequests":10,"debugMessage":"` + strings.Repeat("gt("+attack76Gamertag+")", (1<<20)/16) + `"}`
	under := `{"maxRequests":10,"currentRequests":11,"periodInSeconds":15,"debugMessage":"` + strings.Repeat("xuid(a),gt(b)", 4000) + "gt(" + attack76Gamertag + `)"}`
	for name, body := range map[string]string{"1MiB": huge, "under limit": under} {
		base := attack76RT(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"7"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		start := time.Now()
		texts := attack76Call(t, base, attack76Get(t, attack76Batch))
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", name, d)
		}
		attack76Leaks(t, name, texts, attack76Gamertag)
		attack76Has(t, name, texts, "status=429", "wait=7s")
	}
}

// attack76Big is an error whose text is huge.
type attack76Big struct{ text string }

func (e *attack76Big) Error() string { return e.text }

// attack76ScrubErr makes one call through a Transport whose Base fails
// with an error of text text.
func attack76ScrubErr(t *testing.T, text string) {
	t.Helper()
	var got error
	tr := &transport.Transport{Base: attack76RT(func(*http.Request) (*http.Response, error) { return nil, &attack76Big{text} }),
		TitleID: "1234567890", RetryWindow: -1, DisableBudget: true,
		Observe: func(_ context.Context, e transport.Event) {
			if e.Err != nil {
				got = e.Err
				_ = e.Err.Error()
			}
		}}
	req := attack76Get(t, attack76Batch)
	req.Header.Set("Authorization", mock.Token(attack76TokenXUID, "1234567890"))
	_, err := tr.RoundTrip(req)
	if err == nil || got == nil {
		t.Fatal("setup: no error")
	}
	if strings.Contains(err.Error(), attack76Gamertag) {
		t.Errorf("huge error names the user (%d bytes)", len(text))
	}
}

// held: errors whose text is huge (plain words with one selector, 64
// distinct users then plain words, thousands of selectors, thousands of
// '(' and '=' after letters, a run of digits) are scrubbed in time linear
// in the text (10x the text, at most 30x the time, a quadratic scrub 100x; measured per byte
// about constant from 1 to 16 MiB), and name no user.
func TestAttack76HugeErrorTextScales(t *testing.T) {
	racebuild.Skip(t, "a test of times")
	users := func() string {
		var b strings.Builder
		for i := range 60 {
			fmt.Fprintf(&b, "gt(Gamer%07d) ", i)
		}
		return b.String()
	}()
	for name, mk := range map[string]func(n int) string{
		"words": func(n int) string { return strings.Repeat("reset by peer ", n/14) + "gt(" + attack76Gamertag + ")" },
		"users then": func(n int) string {
			return users + "gt(" + attack76Gamertag + ") " + strings.Repeat("reset by peer ", n/14)
		},
		"selectors": func(n int) string { return "gt(" + attack76Gamertag + ") " + strings.Repeat("gt(ab)", n/6) },
		"parens":    func(n int) string { return "gt(" + attack76Gamertag + ") " + strings.Repeat("abcdefgh(", n/9) },
		"equals":    func(n int) string { return "gt(" + attack76Gamertag + ") " + strings.Repeat("abcdefgh=", n/9) },
		"gtx":       func(n int) string { return "gt(" + attack76Gamertag + ") " + strings.Repeat("gtx(1)", n/6) },
		"digits":    func(n int) string { return "gt(" + attack76Gamertag + ") " + strings.Repeat("1", n) },
	} {
		ts, tl := mk(25_000), mk(250_000) // 200 KB and 2 MB when helper 187 ran it
		g := scaletest.Measure(3, func() { attack76ScrubErr(t, ts) }, func() { attack76ScrubErr(t, tl) })
		t.Logf("%s: 25,000 then 250,000: %v", name, g)
		if g.Ratio() > 30 && g.Large() > 200*time.Millisecond {
			t.Errorf("%s: superlinear for 10x the text: %v", name, g)
		}
	}
}
