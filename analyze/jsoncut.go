package analyze

import (
	"bytes"
	"errors"
	"io"
	"sort"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON readers (HAR and data files) stream: jsontext holds one token
// at a time, but a whole one, so a token's size is bounded before the
// decoder sees it: a jsonCutter passes the text on with each string cut to
// its first maxString bytes and each run of whitespace to maxSpace, and
// refuses a number or literal over maxBare bytes (no writer makes one).
// What a reader keeps of a string is then at most maxString bytes, and its
// memory does not grow with the input.
const (
	// maxString is enough for a body's MaxBody bytes however escaped
	// (\u0041 is 6 bytes for 1), and for any URL or header a trace holds.
	maxString = 6 * MaxBody
	maxSpace  = 1 << 10
	maxBare   = 1 << 10
)

// errBareToken is a number or literal longer than maxBare bytes.
var errBareToken = errors.New("a number or literal over 1 KiB")

// Lexical states of a jsonCutter.
const (
	cutOutside = iota // between tokens
	cutString         // in a string
	cutEscape         // after a backslash in a string
	cutHex            // in the 4 digits of \u (hex counts them)
	cutDrop           // dropping the rest of a long string
	cutDropEsc        // after a backslash, dropping
)

// jsonCutter is the reader in front of a JSON decoder: see maxString. It
// passes on what r holds, less the bytes it drops, and records where it
// dropped them so that an offset in what it passed on maps back to one in
// r (orig).
type jsonCutter struct {
	r       io.Reader
	state   uint8
	hex     uint8
	run     int   // bytes of the current string, or whitespace run, passed on
	bare    int   // bytes of the current number or literal
	in, out int64 // bytes read from r, and passed on
	cuts    []cut // in order of at; the first may be a base left by forget
	err     error
}

// cut records that, before output offset at, total bytes of r had been
// dropped.
type cut struct{ at, total int64 }

func (c *jsonCutter) Read(p []byte) (int, error) {
	for c.err == nil {
		n, err := c.r.Read(p)
		w := c.filter(p[:n])
		if err != nil && c.err == nil {
			c.err = err
		}
		if w > 0 {
			return w, nil
		}
	}
	return 0, c.err
}

// filter filters p in place and returns the bytes kept: what quick passes
// on whole, and the rest a unit at a time (a string's run and what ends
// it, an escape, what lies between two quotes), looked at byte by byte.
func (c *jsonCutter) filter(p []byte) int {
	w, i := 0, 0
	for i < len(p) {
		if n := c.quick(p[i:]); n > 0 {
			if w != i {
				copy(p[w:], p[i:i+n])
			}
			w, i = w+n, i+n
			continue
		}
		for i < len(p) {
			// Runs of a string's plain bytes, kept or dropped, go at once.
			if c.state == cutString || c.state == cutDrop {
				end := len(p)
				if c.state == cutString {
					end = min(end, i+max(maxString-c.run, 0))
				}
				j := i + plainRun(p[i:end])
				if c.state == cutString {
					w += copy(p[w:], p[i:j])
					c.out += int64(j - i)
					c.run += j - i
				} else {
					c.drop(j - i)
				}
				if i = j; i == len(p) || c.state == cutString && c.run < maxString && j == end {
					continue
				}
			}
			b, prev := p[i], c.state
			if c.step(b) {
				p[w] = b
				w++
				c.out++
			} else if c.err != nil {
				c.in += int64(i)
				return w
			} else {
				c.drop(1)
			}
			i++
			if (b == '"' || prev == cutEscape || prev == cutHex) && (c.state == cutString || c.state == cutOutside) {
				break // past a quote or an escape: quick may go on
			}
		}
	}
	c.in += int64(len(p))
	return w
}

// quick passes on the longest start of p that needs no byte looked at but
// its quotes, and returns its length: before the first backslash, up to a
// quote, none of its runs between quotes long enough to reach a bound
// (every block of quickBlock bytes holds a quote, so no run is
// 2*quickBlock long).
func (c *jsonCutter) quick(p []byte) int {
	if c.state != cutOutside && c.state != cutString {
		return 0
	}
	if e := bytes.IndexByte(p, '\\'); e >= 0 {
		p = p[:e]
	}
	first := bytes.IndexByte(p, '"')
	if first < 0 || c.state == cutString && c.run+first >= maxString || c.state == cutOutside && max(c.run, c.bare)+first >= 2*quickBlock {
		return 0
	}
	n := len(p)
	for b := first + 1; b+quickBlock <= len(p); b += quickBlock {
		if bytes.IndexByte(p[b:b+quickBlock], '"') < 0 {
			n = b
			break
		}
	}
	last := bytes.LastIndexByte(p[:n], '"')
	if n < len(p) { // a long run follows: stop at the quote before it
		n = last + 1
	}
	if bytes.Count(p[:n], []byte{'"'})%2 == 1 {
		c.state = cutString + cutOutside - c.state
	}
	tail := p[last+1 : n]
	c.run, c.bare = len(tail), 0
	if c.state == cutOutside { // its runs, as step counts them
		c.run = 0
		for _, b := range tail {
			c.step(b)
		}
	}
	c.out += int64(n)
	return n
}

// quickBlock is what quick checks holds a quote: twice it is at most
// maxSpace and maxBare.
const quickBlock = 512

// plainRun returns how many bytes of a string's text p starts with that
// neither end it nor start an escape.
func plainRun(p []byte) int {
	if q := bytes.IndexByte(p, '"'); q >= 0 {
		p = p[:q]
	}
	if e := bytes.IndexByte(p, '\\'); e >= 0 {
		return e
	}
	return len(p)
}

// step moves c past byte b and reports whether b is kept.
func (c *jsonCutter) step(b byte) bool {
	switch c.state {
	case cutOutside:
		switch b {
		case ' ', '\t', '\r', '\n':
			c.bare = 0
			c.run++
			return c.run <= maxSpace
		case '"':
			c.state, c.run, c.bare = cutString, 0, 0
		case '{', '}', '[', ']', ',', ':':
			c.run, c.bare = 0, 0
		default:
			c.run = 0
			if c.bare++; c.bare > maxBare {
				c.err = errBareToken
				return false
			}
		}
	case cutString:
		switch {
		case b == '"':
			c.state, c.run = cutOutside, 0
			return true
		case c.run >= maxString && b&0xC0 != 0x80: // cut at a character's start
			c.state = cutDrop
			if b == '\\' {
				c.state = cutDropEsc
			}
			return false
		case b == '\\':
			c.state = cutEscape
		}
		c.run++
	case cutEscape:
		c.state = cutString
		if b == 'u' {
			c.state, c.hex = cutHex, 4
		}
		c.run++
	case cutHex:
		if c.hex--; c.hex == 0 {
			c.state = cutString
		}
		c.run++
	case cutDrop:
		switch b {
		case '"':
			c.state, c.run = cutOutside, 0
			return true
		case '\\':
			c.state = cutDropEsc
		}
		return false
	case cutDropEsc:
		c.state = cutDrop
		return false
	}
	return true
}

// drop records n bytes dropped at the current output offset.
func (c *jsonCutter) drop(n int) {
	if n == 0 {
		return
	}
	if k := len(c.cuts); k > 0 && c.cuts[k-1].at == c.out {
		c.cuts[k-1].total += int64(n)
		return
	}
	var total int64
	if k := len(c.cuts); k > 0 {
		total = c.cuts[k-1].total
	}
	c.cuts = append(c.cuts, cut{c.out, total + int64(n)})
}

// orig maps an offset in what c passed on to the offset in r.
func (c *jsonCutter) orig(off int64) int64 {
	i := sort.Search(len(c.cuts), func(i int) bool { return c.cuts[i].at > off })
	if i == 0 {
		return off
	}
	return off + c.cuts[i-1].total
}

// forget lets c forget the cuts before output offset off (keeping what
// they add up to), once no offset before it will be asked for: at most the
// cuts of one entry are kept.
func (c *jsonCutter) forget(off int64) {
	i := sort.Search(len(c.cuts), func(i int) bool { return c.cuts[i].at > off })
	if i > 1 {
		c.cuts = append(c.cuts[:0], c.cuts[i-1:]...)
	}
}

// errOffset returns where in r the decoder's error err happened: the
// offset it names, else (the input's end, a read error) as far as r was
// read.
func (c *jsonCutter) errOffset(err error) int64 {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.ByteOffset > 0 && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return c.orig(se.ByteOffset)
	}
	return c.in
}

// startOffset returns where in r the value dec peeked at starts.
func (c *jsonCutter) startOffset(dec *jsontext.Decoder) int64 {
	ub := dec.UnreadBuffer()
	return c.orig(dec.InputOffset() + int64(len(ub)-len(bytes.TrimLeft(ub, " \t\r\n,:"))))
}
