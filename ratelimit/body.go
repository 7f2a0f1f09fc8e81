// Package ratelimit holds the HTTP wire formats of Fine-Grained Rate
// Limiting, each writer beside its reader, as net/http keeps TimeFormat
// beside ParseTime: the 429 body (JSON, or the Store's text), the
// Retry-After header, and the RateLimit / RateLimit-Policy headers the mock
// adds so a client can keep its budget in sync. Like package throttle, it
// reads no clock: ParseRetryAfter takes now.
package ratelimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// MaxBodySize bounds the 429 bodies ParseBody reads.
const MaxBodySize = 64 << 10

// Body is the JSON body of an FGRL 429, with lower camel case keys, as the
// "Fine-Grained Rate Limiting" page of the Xbox services documentation
// shows it. json.Marshal writes it; ParseBody reads it.
type Body struct {
	Version         int    `json:"version"`
	CurrentRequests int    `json:"currentRequests"`
	MaxRequests     int    `json:"maxRequests"`
	PeriodInSeconds int    `json:"periodInSeconds"`
	LimitType       string `json:"limitType"` // the service's word, kept as sent: "Rate" or "Concurrency" (in any case) in the recordings; not checked
	DebugMessage    string `json:"debugMessage,omitempty"`
	// Aspect is the Store's counter name ("{userId;titleId}"); it is set only by
	// ParseBody reading a Store text body and is never sent as JSON.
	Aspect string `json:"-"`
}

// The Store's counters, as its 429 text names them (SPEC.md section 2): a
// user's calls in one title, and in all of one publisher's titles.
const (
	AspectTitle     = "{userId;titleId}"
	AspectPublisher = "{userId;publisherId}"
)

// ErrBody is wrapped by every error ParseBody returns.
var ErrBody = errors.New("ratelimit: malformed 429 body")

// ParseBody reads a 429 body: the JSON form, whose numbers may be sent as
// strings and whose unknown keys are ignored, or the Store's text form ("The
// rate limit of X operations in Y seconds has been exceeded for aspect Z.").
// Bodies over MaxBodySize, negative numbers and anything else are errors
// wrapping ErrBody.
func ParseBody(b []byte) (Body, error) {
	if len(b) > MaxBodySize {
		return Body{}, fmt.Errorf("%w: larger than %d bytes", ErrBody, MaxBodySize)
	}
	t := bytes.TrimSpace(b)
	if len(t) > 0 && t[0] == '{' {
		return parseJSONBody(t)
	}
	return parseStoreBody(string(t))
}

type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" { // JSON's null: no number
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		uq, err := strconv.Unquote(s)
		if err != nil {
			return err
		}
		s = strings.TrimSpace(uq) // a number sent as a string; "null" so sent is no number
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("not a non-negative integer: %.40s", b)
	}
	*f = flexInt(n)
	return nil
}

// parseJSONBody reads the JSON form's keys exactly as the body has them
// (lower camel case, as the FGRL documentation shows them): encoding/json
// matches a field's name in any case, so a key the body does not have,
// "MaxRequests" after "maxRequests", would override the one it has.
func parseJSONBody(b []byte) (Body, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return Body{}, fmt.Errorf("%w: %v", ErrBody, err)
	}
	var w Body
	for _, f := range []struct {
		key string
		to  any
	}{
		{"version", (*flexInt)(&w.Version)},
		{"currentRequests", (*flexInt)(&w.CurrentRequests)},
		{"maxRequests", (*flexInt)(&w.MaxRequests)},
		{"periodInSeconds", (*flexInt)(&w.PeriodInSeconds)},
		{"limitType", &w.LimitType},
		{"debugMessage", &w.DebugMessage},
	} {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, f.to); err != nil {
			return Body{}, fmt.Errorf("%w: %s: %v", ErrBody, f.key, err)
		}
	}
	return w, nil
}

const (
	storePrefix = "The rate limit of "
	storeOps    = " operations in "
	storeSecs   = " seconds has been exceeded for aspect "
)

// StoreText returns the Store's 429 text for a limit of max operations per
// seconds on aspect.
func StoreText(max, seconds int, aspect string) string {
	return storePrefix + strconv.Itoa(max) + storeOps + strconv.Itoa(seconds) + storeSecs + aspect + "."
}

// BodyOf returns the 429 body that describes d: the counts and period of the
// limit that refused it, with limitType "Rate". For an allowed decision it
// describes the sustain window.
func BodyOf(d throttle.Decision) Body {
	p := d.Limiter
	if p == throttle.None {
		p = throttle.Sustain
	}
	w := d.Sustain
	if p == throttle.Burst {
		w = d.Burst
	}
	return Body{
		Version:         1,
		CurrentRequests: w.Count,
		MaxRequests:     w.Limit,
		PeriodInSeconds: int(p.Duration() / time.Second),
		LimitType:       "Rate",
	}
}

func parseStoreBody(s string) (Body, error) {
	rest, ok := strings.CutPrefix(s, storePrefix)
	maxS, rest, ok2 := strings.Cut(rest, storeOps)
	secS, aspect, ok3 := strings.Cut(rest, storeSecs)
	if !ok || !ok2 || !ok3 {
		return Body{}, fmt.Errorf("%w: neither JSON nor the Store's text", ErrBody)
	}
	max, err1 := strconv.Atoi(maxS)
	secs, err2 := strconv.Atoi(secS)
	if err1 != nil || err2 != nil || max < 0 || secs < 0 {
		return Body{}, fmt.Errorf("%w: bad numbers in the Store's text", ErrBody)
	}
	return Body{
		MaxRequests: max, PeriodInSeconds: secs, LimitType: "Rate",
		DebugMessage: s, Aspect: strings.TrimSuffix(aspect, "."),
	}, nil
}
