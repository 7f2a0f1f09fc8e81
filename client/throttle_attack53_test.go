package client

// Outside attack (helper 168) on 429s: odd Retry-After values, and 429
// (and other error) bodies that echo the caller's credentials.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/hresult"
	"github.com/xblgo/fgrl/transport"
)

// held: transport: "Retry-After: integer seconds | also an HTTP-date;
// capped at 10 minutes" and ThrottleError.Wait "is how long to wait
// before trying again": whatever a 429's Retry-After says (negative,
// huge, a date past or far ahead, given twice, garbage), the call ends
// within its context as a 429 *Error whose ThrottleError waits 0 to 10
// minutes (× 1.2 of jitter), and the next call fails fast, not hanging.
func TestAttack53RetryAfterOddValues(t *testing.T) {
	cases := map[string][]string{
		"negative":    {"-5"},
		"huge":        {"99999999999999999999999999"},
		"maxint":      {"9223372036854775807"},
		"past date":   {time.Now().Add(-48 * time.Hour).UTC().Format(http.TimeFormat)},
		"future date": {time.Now().Add(365 * 24 * time.Hour).UTC().Format(http.TimeFormat)},
		"two headers": {"0", "600000"},
		"list":        {"1, 999999"},
		"garbage":     {"soon"},
		"fraction":    {"1.5"},
	}
	i := 0
	for name, vals := range cases {
		i++
		user := fmt.Sprintf("25332747000000%02d", i) // one user a case: the Retry-After cache is per user
		srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
			for _, v := range vals {
				w.Header().Add("Retry-After", v)
			}
			w.WriteHeader(429)
			fmt.Fprint(w, `{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate","debugMessage":"slow down"}`)
		})
		c := attack53Client(t, srv, &transport.Transport{TitleID: title, RetryWindow: -1}, "userpresence.xboxlive.com")
		for attempt := 0; attempt < 2; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			start := time.Now()
			_, err := c.As(user).GetPresence(ctx, other)
			cancel()
			d := time.Since(start)
			var e *Error
			var te *transport.ThrottleError
			switch {
			case !errors.As(err, &e) || !errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS):
				t.Errorf("%s, call %d: %v, want a 429 *Error", name, attempt, err)
			case !errors.As(err, &te):
				t.Errorf("%s, call %d: no ThrottleError in %v", name, attempt, err)
			case te.Wait < 0 || te.Wait > transport.MaxRetryAfter*6/5:
				t.Errorf("%s, call %d: ThrottleError.Wait %v", name, attempt, te.Wait)
			}
			if d > 2500*time.Millisecond {
				t.Errorf("%s, call %d: took %v", name, attempt, d)
			}
		}
	}
}

// attack53Texts is every text of err a caller may print or read: Error(),
// %v, %+v, %#v, and the same of every error in its chain, of a
// ThrottleError's Body and of an *Error's fields.
func attack53Texts(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
		if ce, ok := e.(*Error); ok {
			out = append(out, ce.Message, ce.Service, ce.API, fmt.Sprintf("%#v", *ce))
		}
		if te, ok := e.(*transport.ThrottleError); ok {
			out = append(out, fmt.Sprintf("%#v", *te))
			if te.Body != nil {
				out = append(out, fmt.Sprintf("%#v", *te.Body), te.Body.LimitType, te.Body.DebugMessage, te.Body.Aspect)
			}
		}
	}
	return out
}

// held: transport/client: "an error's text leaves out the credentials of
// the request as sent": a 429 (and a 400, and a malformed 200) body that
// echoes the caller's Authorization and Signature, whole, token alone,
// JSON-escaped, URL-escaped, in any field, shows neither in any text or
// field of the error.
func TestAttack53EchoedSecretsNotInErrors(t *testing.T) {
	tok := attack53Token(me)
	_, bare, _ := strings.Cut(tok.Authorization, ";")
	echo := strings.Join([]string{tok.Authorization, bare, tok.Signature, strings.ToLower(bare),
		strings.ReplaceAll(tok.Authorization, " ", "%20"), `\u0041TK168SECRETTOKEN` + me}, " | ")
	bodies := []struct {
		status int
		body   string
	}{
		{429, fmt.Sprintf(`{"currentRequests":11,"maxRequests":10,"periodInSeconds":15,"limitType":%s,"debugMessage":%s}`, attack53JSON(tok.Signature), attack53JSON(echo))},
		{429, "The rate limit of 10 operations in 15 seconds has been exceeded for aspect " + tok.Authorization + "."},
		{400, fmt.Sprintf(`{"code":%s,"description":%s,"message":%s}`, attack53JSON(bare), attack53JSON(echo), attack53JSON(echo))},
		{401, echo},
		{503, `{"message":"` + strings.ReplaceAll(echo, `\`, `\\`) + `"}`},
		{200, `{"xuid":"` + tok.Authorization + `","state":` + tok.Signature + `}`},
		{200, `{"xuid":` + attack53JSON(echo) + `,"state":"Online"}`},
	}
	for _, b := range bodies {
		srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("WWW-Authenticate", tok.Authorization)
			w.WriteHeader(b.status)
			fmt.Fprint(w, b.body)
		})
		c := attack53Client(t, srv, nil, "userpresence.xboxlive.com")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.As(me).GetPresence(ctx, other)
		cancel()
		if err == nil {
			t.Errorf("status %d: no error", b.status)
			continue
		}
		for _, s := range attack53Texts(err) {
			low := strings.ToLower(s)
			if strings.Contains(low, "attack53secret") {
				t.Errorf("status %d: an error text carries the credentials: %.300q", b.status, s)
				break
			}
		}
	}
}
