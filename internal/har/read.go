package har

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// Bounds on what Read accepts.
const (
	MaxSize    = 256 << 20 // bytes of HAR
	MaxEntries = 2_000_000
)

// ErrTooLarge is returned for a trace over MaxSize or MaxEntries.
var ErrTooLarge = errors.New("har: trace too large")

// Read reads the entries of a HAR trace of at most MaxSize bytes,
// streaming: memory holds one entry at a time plus the kept fields. Errors
// name the entry that failed.
func Read(r io.Reader) ([]Entry, error) { return ReadLimit(r, MaxSize) }

// ReadLimit is Read with a size limit of max bytes.
func ReadLimit(r io.Reader, max int64) ([]Entry, error) {
	lr := &io.LimitedReader{R: r, N: max + 1}
	dec := json.NewDecoder(lr)
	if err := seek(dec, "log", "entries"); err != nil {
		return nil, tooLarge(lr, max, err)
	}
	var out []Entry
	for i := 0; dec.More(); i++ {
		if i == MaxEntries {
			return nil, fmt.Errorf("%w: more than %d entries", ErrTooLarge, MaxEntries)
		}
		var raw rawEntry
		if err := dec.Decode(&raw); err != nil {
			return nil, tooLarge(lr, max, fmt.Errorf("har: entry %d: %w", i, err))
		}
		e, err := raw.entry()
		if err != nil {
			return nil, fmt.Errorf("har: entry %d: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func tooLarge(lr *io.LimitedReader, max int64, err error) error {
	if lr.N <= 0 {
		return fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
	}
	return err
}

// seek moves dec into the array at path (object keys), skipping every other
// value.
func seek(dec *json.Decoder, path ...string) error {
	for depth, want := range path {
		if err := expect(dec, json.Delim('{')); err != nil {
			return fmt.Errorf("har: not a HAR file: %w", err)
		}
		for {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("har: not a HAR file: %w", err)
			}
			if tok == json.Delim('}') {
				return fmt.Errorf("har: not a HAR file: no %q", strings.Join(path[:depth+1], "."))
			}
			if tok == want {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("har: not a HAR file: %w", err)
			}
		}
	}
	if err := expect(dec, json.Delim('[')); err != nil {
		return fmt.Errorf("har: %s is not an array: %w", strings.Join(path, "."), err)
	}
	return nil
}

func expect(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %q, found %v", d, tok)
	}
	return nil
}

func (raw *rawEntry) entry() (Entry, error) {
	t, err := time.Parse(time.RFC3339Nano, raw.StartedDateTime)
	if err != nil {
		return Entry{}, fmt.Errorf("startedDateTime %q is not an ISO 8601 time", clip(raw.StartedDateTime))
	}
	if raw.Request.Method == "" || raw.Request.URL == "" {
		return Entry{}, errors.New("request has no method or url")
	}
	e := Entry{Started: t, Method: raw.Request.Method, URL: raw.Request.URL, Status: raw.Response.Status}
	for _, h := range raw.Request.Headers {
		if strings.EqualFold(h.Name, "Authorization") {
			e.Authorization = xblauth.Redact(h.Value)
		}
	}
	for _, h := range raw.Response.Headers {
		if strings.EqualFold(h.Name, "Retry-After") {
			e.RetryAfter = h.Value
		}
	}
	return e, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
