package analyze

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
)

// jsonDecoder returns a decoder of the JSON text r holds, through a
// jsonCutter (which maps the decoder's byte offsets back to r's). Invalid
// UTF-8 and lone surrogates in strings are read (as U+FFFD), not errors.
func jsonDecoder(r io.Reader) (*jsontext.Decoder, *jsonCutter) {
	cut := &jsonCutter{r: bufio.NewReaderSize(r, 64<<10)} // the decoder's reads are small
	return jsontext.NewDecoder(cut, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)), cut
}

// shortErr is a decoder's error, short: its reason without the fragment of
// input it quotes.
func shortErr(err error) string {
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of file"
	case errors.Is(err, errBareToken):
		return errBareToken.Error()
	}
	reason := err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.Err != nil {
		reason = se.Err.Error()
	}
	// The decoder quotes the bad input as far as it has read it (a token's
	// fragment, a character whole or its first byte), which depends on how
	// the input arrived; the reason does not.
	return safetext.Reason(reason, 60)
}

// A fielder reads or skips the value of one key of an object.
type fielder interface{ field(key []byte) error }

// object calls f.field for each key of the object dec is at, which must read
// or skip the value; a value that is not an object is skipped. The key is
// valid only during the call (it is not copied: keys are read without
// allocating).
func object(dec *jsontext.Decoder, f fielder) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var buf [32]byte
	for dec.PeekKind() != '}' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if err := f.field(unquote(buf[:0], v)); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// unquote returns the text of the JSON string v: a slice of v when it has no
// escapes, else unquoted into buf. Invalid UTF-8 and lone surrogates, which
// the decoder lets through, read as U+FFFD (AppendUnquote's error says only
// that).
func unquote(buf []byte, v jsontext.Value) []byte {
	if len(v) >= 2 && bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	b, _ := jsontext.AppendUnquote(buf, v)
	return b
}

// readString reads a string value, unquoted, into *b (reusing it); any
// other value is skipped and leaves *b empty.
func readString(dec *jsontext.Decoder, b *[]byte) error {
	*b = (*b)[:0]
	if dec.PeekKind() != '"' {
		return dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	*b, _ = jsontext.AppendUnquote(*b, v) // see unquote
	return nil
}

// number reads a number value; any other value is skipped and reads as 0.
func number(dec *jsontext.Decoder) (float64, error) {
	if dec.PeekKind() != '0' {
		return 0, dec.SkipValue()
	}
	v, err := dec.ReadValue()
	if err != nil {
		return 0, err
	}
	f, _ := strconv.ParseFloat(string(v), 64)
	return f, nil
}

// afterReason says why a JSON reader stopped on err after what (the
// entries, the array of endpoints), before the document's end.
func afterReason(err error, what string) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Sprintf("the file ends after %s, before the document does", what)
	}
	return fmt.Sprintf("not valid JSON after %s (%s)", what, shortErr(err))
}

// endOfInput reads to the end of the input, which must hold nothing but
// white space after what. Anything else (a second document, which a
// reader of the last one would judge instead, or garbage) is where reading
// stops, at entry i.
func endOfInput(dec *jsontext.Decoder, cut *jsonCutter, in *Input, i int, what string) {
	off := cut.startOffset(dec)
	switch _, err := dec.ReadToken(); {
	case err == io.EOF:
	case err == nil, errors.As(err, new(*jsontext.SyntacticError)):
		in.stop(i, off, "data after %s: readers differ on what it holds", what)
	default:
		in.stop(i, cut.in, "reading stopped after %s: %s", what, shortErr(err))
	}
}

// stopReason says why a JSON reader stopped at entry i on err.
func stopReason(err error, i int, what string) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Sprintf("the file ends inside %s %d", what, i)
	}
	return fmt.Sprintf("%s %d is not valid JSON (%s)", what, i, shortErr(err))
}

// foldedName reports whether key is the field name (ASCII) in some case,
// as a reader that matches names in any case reads it: encoding/json by
// Unicode simple folding ("ſ" (U+017F) and the Kelvin sign read as "s"
// and "k"), Json.NET by upper-casing each character ("ı" (U+0131) reads
// as "I"). Every JSON reader of traces makes a key that is a field's name
// so but not as it reads it a problem: readers differ on which counts.
func foldedName(key []byte, name string) bool {
	if bytes.EqualFold(key, []byte(name)) {
		return true
	}
	i := 0
	for len(key) > 0 {
		r, n := utf8.DecodeRune(key)
		key = key[n:]
		if i == len(name) {
			return false
		}
		c := rune(name[i])
		i++
		if unicode.ToUpper(r) != unicode.ToUpper(c) && unicode.ToLower(r) != unicode.ToLower(c) {
			return false
		}
	}
	return i == len(name)
}
