package analyze

import (
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// ReadHAR reads a HAR 1.2 trace (what browsers, Fiddler and proxies
// export), streaming, and passes each entry to add as a Call (reused: add
// must copy what it keeps), its Authorization redacted, in trace order. An
// entry that lacks a method, URL, start time or response status (HAR 1.2
// requires response and response.status), or whose URL is not an absolute
// http(s) URL naming a host (or a ws or wss one: a real-time socket; the
// host a DNS name of letters, digits and '-' in labels joined by '.', an
// IPv4 address in dotted decimal (four numbers to 255, no leading zero: a
// name whose last label is digits, or 0x and hex digits, is an IPv4
// address to a browser, so 127.1 and 0x7f.0.0.1 are none), or an IPv6
// address in brackets, with an optional port; no backslash before the
// query, no tab or line break), whose start time is outside the years
// 1678 to 2262 (the times a call's nanoseconds hold),
// whose status is neither 0 (no answer, as browsers record one) nor an
// integer from 100 to 999, that names one of the fields read twice, or in
// another case ("Text", which encoding/json reads as "text"), that holds
// two Authorization, User-Agent or Retry-After headers (readers differ on
// which one counts), or whose 429 holds a Retry-After that is not one value
// (delay seconds, digits alone, or an HTTP-date as net/http parses it, in
// at most 256 bytes: "60, 120", two headers combined, "+60" and "" are not)
// is skipped and named in Input.Problems; a file cut short or not valid
// JSON past some entry, longer than MaxTraceBytes or MaxCalls entries, or
// holding anything after the entries that could hold calls other readers
// read (a second "entries" in the log or a second "log", which JSON.parse
// and encoding/json take in place of the first, in any case, as
// encoding/json matches names, or data after the document) yields the calls
// before and Input.Stop. Either way the trace is not Complete. A header
// object is read as JSON.parse reads it, its last "name" and "value"
// counting. A string is read to its first 384 KiB (a body to its first
// MaxBody bytes, a URL to MaxURL); invalid UTF-8 in it reads as U+FFFD. The
// error is for input that is no HAR at all.
func ReadHAR(r io.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	cr := &cappedReader{r: r, left: maxTraceBytes}
	dec, cut := jsonDecoder(cr)
	if err := seekEntries(dec); err != nil {
		if cr.over {
			return in, fmt.Errorf("%w: HAR: no entries within its first %d MiB", ErrNotTrace, maxTraceBytes>>20)
		}
		return in, fmt.Errorf("%w: HAR: %v", ErrNotTrace, err)
	}
	if decodeEntries(dec, cut, &in, func(c *Call) { in.Calls++; add(c) }) {
		finishHAR(dec, cut, &in)
	}
	if cr.over {
		in.stop(in.Calls+in.ProblemCount, cut.in, "%s", overLimit())
	}
	return in, nil
}

// HARLimits returns the limits data a HAR written by xblcall simulate
// names (the log's _fgrlLimits field, before its entries), or nil when it
// names none. It reads only up to the entries, at most maxLimitsScan bytes.
func HARLimits(r io.Reader) ([]byte, error) {
	dec, _ := jsonDecoder(io.LimitReader(r, maxLimitsScan))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("%w: HAR: want an object holding \"log\"", ErrNotTrace)
	}
	for {
		tok, err := dec.ReadToken()
		if err != nil || tok.Kind() == '}' {
			return nil, nil
		}
		if tok.String() != "log" {
			if err := dec.SkipValue(); err != nil {
				return nil, nil
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, nil
		}
		for {
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() == '}' || tok.String() == "entries" {
				return nil, nil
			}
			if tok.String() == "_fgrlLimits" {
				v, err := dec.ReadValue()
				if err != nil {
					return nil, nil
				}
				return append([]byte(nil), v...), nil
			}
			if err := dec.SkipValue(); err != nil {
				return nil, nil
			}
		}
	}
}

// maxLimitsScan bounds what HARLimits reads.
const maxLimitsScan = 2 << 20

// decodeEntries decodes the entries dec is at (inside the entries array)
// until the array ends or MaxCalls entries have been read; each becomes a
// call or a problem of in, and where it stops early is in's Stop. It
// reports whether it reached the array's end (and read it).
func decodeEntries(dec *jsontext.Decoder, cut *jsonCutter, in *Input, call func(*Call)) bool {
	var h harReader
	for i := 0; ; i++ {
		kind := dec.PeekKind()
		off := cut.startOffset(dec)
		cut.forget(dec.InputOffset())
		switch {
		case kind == ']':
			if _, err := dec.ReadToken(); err != nil {
				in.stop(i, cut.errOffset(err), "%s", stopReason(err, i, "entry"))
				return false
			}
			return true
		case kind == 0:
			_, err := dec.ReadToken()
			in.stop(i, cut.errOffset(err), "%s", stopReason(err, i, "entry"))
			return false
		case i == MaxCalls:
			in.stop(i, off, "stopped after %d entries, the most one trace may hold", MaxCalls)
			return false
		}
		c, bad, err := h.entry(dec, i, off)
		switch {
		case err != nil:
			in.stop(i, cut.errOffset(err), "%s", stopReason(err, i, "entry"))
			return false
		case bad != "":
			in.problem(i, off, "%s", bad)
		default:
			call(c)
		}
	}
}

// finishHAR reads what follows the entries to the end of the input: the
// rest of the log object, then of the root object, each value skipped,
// then nothing but white space. A second "entries" in the log, or a second
// "log" at the root, is where reading stops: JSON.parse, Python's json and
// encoding/json take the last of a repeated name, so other readers would
// judge the calls there, not the ones read. So is a document cut short or
// broken after the entries, or anything after it.
func finishHAR(dec *jsontext.Decoder, cut *jsonCutter, in *Input) {
	i := in.Calls + in.ProblemCount // the entries read
	for _, again := range []string{"entries", "log"} {
		for {
			off := cut.startOffset(dec)
			tok, err := dec.ReadToken()
			switch {
			case err != nil:
				in.stop(i, cut.errOffset(err), "%s", afterReason(err, "the entries"))
				return
			case tok.Kind() == '}':
			case foldedName([]byte(tok.String()), again): // encoding/json folds case (and ſ, K)
				in.stop(i, off, "a second %q after the entries: readers that take the last of a repeated name read the calls there", again)
				return
			default:
				if err := dec.SkipValue(); err != nil {
					in.stop(i, cut.errOffset(err), "%s", afterReason(err, "the entries"))
					return
				}
				continue
			}
			break
		}
	}
	endOfInput(dec, cut, in, i, "the HAR document")
}

// seekEntries moves dec into the log.entries array, skipping other values.
func seekEntries(dec *jsontext.Decoder) error {
	for _, key := range []string{"log", "entries"} {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return fmt.Errorf("want an object holding %q", key)
		}
		for {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			if tok.Kind() == '}' {
				return fmt.Errorf("no %q", key)
			}
			if tok.String() == key {
				break
			}
			if err := dec.SkipValue(); err != nil {
				return err
			}
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return errors.New("log.entries is not an array")
	}
	return nil
}
