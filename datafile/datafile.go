// Package datafile reads the module's data files (limits, worlds, scripts,
// the analyzer's rules, call patterns) the one strict way, and reports
// what is wrong with one as an *Error naming the file, line and field.
//
// A file is JSON when its first character other than white space is '{'
// or '[', else YAML (or, for a kind with a Text reader, its own text form:
// a pattern's CSV). YAML is written as JSON, each value marked with its
// YAML line, and both forms are then read alike, in three steps:
//
//  1. The JSON is read through once before anything is decoded: its
//     syntax (a key named twice and text that is not UTF-8 among it), its
//     nesting (at most MaxNesting levels) and the length of every list the
//     kind bounds (Kind.Lists), so that a list of empty objects is refused
//     before it becomes a list of large Go values.
//  2. go-json-experiment/json decodes it into the kind's Go value, refusing
//     unknown fields (a name matches a field exactly, case included) and
//     values of the wrong type.
//  3. The kind's own check runs; what it finds names a field, and is
//     given the line that field is on.
//
// Reading a file takes time and memory linear in its length.
package datafile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxNesting bounds how deep a file's values nest, in JSON and in YAML:
// the document's own value is at depth 1, a value in it at depth 2.
const MaxNesting = 64

// MaxYAMLBytes bounds a file written in YAML, whatever its kind allows:
// the YAML parser holds a file's whole tree, about a hundred bytes for each
// byte read, before anything in it can be refused. A file in JSON is read
// as it is and may be as large as its kind's MaxBytes.
const MaxYAMLBytes = 1 << 20

// Kind is a kind of data file: what its errors call a file read from a
// reader, how large a file may be and how long its lists. The package that
// owns a kind declares it once and never changes it; a Kind is then safe
// for concurrent use.
type Kind struct {
	// Name names a file read from a reader in its errors: "world",
	// "limits".
	Name string
	// MaxBytes bounds a file; one in YAML is bounded by MaxYAMLBytes too.
	MaxBytes int
	// Lists bounds lists by where they are: a JSON Pointer in which "*"
	// stands for any index or member name ("/accounts/*/friends"), to the
	// most members an array or object there may have. A longer list is
	// refused with its line before anything is decoded.
	Lists map[string]int
	// Totals bounds lists as Lists does, but all the lists at a pointer
	// together: the most members they may have in all
	// ("/rules/*/answers": every rule's answers).
	Totals map[string]int
	// Text, when set, reads a file that is not JSON into v instead of
	// YAML (a pattern's CSV). What is wrong is an *Error naming the line.
	Text func(data []byte, v any) error
}

// Read reads a file of the kind from r, at most MaxBytes, strictly into v
// (a pointer), then runs check, if not nil, which reports what is wrong
// with v as an *Error naming a field. Every error is an *Error whose File
// is the kind's Name; v then holds what was decoded before it, if anything.
func (k *Kind) Read(r io.Reader, v any, check func() error) error {
	data, err := k.readAll(r, k.Name)
	if err != nil {
		return err
	}
	return k.decode(data, k.Name, v, check)
}

// Load reads the named file as Read reads one; every error is an *Error
// whose File is name (wrapping the *fs.PathError when the file cannot be
// opened or read).
func (k *Kind) Load(name string, v any, check func() error) error {
	f, err := os.Open(name)
	if err != nil {
		return &Error{File: name, Reason: "cannot open: " + causeOf(err), Err: err}
	}
	defer f.Close()
	data, err := k.readAll(f, name)
	if err != nil {
		return err
	}
	return k.decode(data, name, v, check)
}

// readAll reads r whole, refusing more than MaxBytes.
func (k *Kind) readAll(r io.Reader, file string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(k.MaxBytes)+1))
	switch {
	case err != nil:
		return nil, &Error{File: file, Reason: "cannot read: " + causeOf(err), Err: err}
	case len(data) > k.MaxBytes:
		return nil, &Error{File: file, Reason: fmt.Sprintf("larger than %d bytes", k.MaxBytes)}
	}
	return data, nil
}

// causeOf is an I/O error without the file name an *fs.PathError repeats.
func causeOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// decode reads data, a file of the kind named file in errors, into v and
// checks it.
func (k *Kind) decode(data []byte, file string, v any, check func() error) error {
	s := &source{json: data}
	if err := s.read(k, v, check); err != nil {
		err.File = file
		return err
	}
	return nil
}

// read reads the source into v and checks it.
func (s *source) read(k *Kind, v any, check func() error) *Error {
	switch c := firstChar(s.json); {
	case c == '{' || c == '[':
	case c == 0 && k.Text == nil:
		return &Error{Reason: "empty: no document"}
	case k.Text != nil:
		if err := k.Text(s.json, v); err != nil {
			return asError(err)
		}
		s.json = nil // no JSON to place a check's field in
		return s.checked(check)
	case len(s.json) > MaxYAMLBytes:
		return &Error{Reason: fmt.Sprintf("YAML larger than %d bytes: write a file this large in JSON", MaxYAMLBytes)}
	default:
		if err := s.fromYAML(s.json); err != nil {
			return err
		}
	}
	if err := s.scan(boundsOf(k.Lists, k.Totals)); err != nil {
		return err
	}
	// The scan refused a name twice in an object: the decoder need not
	// keep the names again.
	if err := json.Unmarshal(s.json, v, json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(true)); err != nil {
		return s.decodeError(err)
	}
	return s.checked(check)
}

// firstChar returns the first byte of data that is not white space, or 0.
func firstChar(data []byte) byte {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 {
		return t[0]
	}
	return 0
}

// checked runs check and places its error on the line of its field.
func (s *source) checked(check func() error) *Error {
	if check == nil {
		return nil
	}
	err := check()
	if err == nil {
		return nil
	}
	e := asError(err)
	if e.Line == 0 && e.Field != "" && s.json != nil {
		e.Line = s.line(s.locateField(e.Field))
	}
	return e
}

// asError returns err as an *Error: itself, or its text as the reason.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Reason: err.Error(), Err: err}
}

// source is a file as JSON and, for one written in YAML, the YAML line of
// each stretch of that JSON.
type source struct {
	json  []byte
	yaml  bool
	marks []lineMark // YAML only: where each value and key starts in the JSON, in order
	// walked counts the bytes the passes through the JSON other than the
	// decoder's read, for the test that they stay in proportion to it.
	walked int
}

// boundsOf compiles a kind's Lists and Totals into a tree of pointer
// steps.
func boundsOf(lists, totals map[string]int) *bound {
	root := &bound{}
	at := func(p string) *bound {
		b := root
		for tok := range jsontext.Pointer(p).Tokens() {
			if b.next == nil {
				b.next = map[string]*bound{}
			}
			if b.next[tok] == nil {
				b.next[tok] = &bound{}
			}
			b = b.next[tok]
		}
		return b
	}
	for p, n := range lists {
		at(p).max = n
	}
	for p, n := range totals {
		at(p).total = n
	}
	return root
}

// bound is a step of the pointers of Lists and Totals: the most members a
// list there may have, and all of them together (0: no bound), the
// members read so far in all, and the steps below it, by member name or
// "*".
type bound struct {
	max, total, seen int
	next             map[string]*bound
}

// child returns the bound of the member name of what b bounds (an index
// of an array is "*"), or nil.
func (b *bound) child(name string) *bound {
	if b == nil {
		return nil
	}
	if c := b.next[name]; c != nil {
		return c
	}
	return b.next["*"]
}
