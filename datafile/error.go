package datafile

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
)

// Error is what is wrong with a data file: the one error every reader of
// data files returns, and the one a command turns into its usage exit
// status.
type Error struct {
	// File is the file: the name given to Kind.Load, or the kind's Name
	// for one read from a reader or a value checked in Go ("world").
	File string
	// Line is the line the problem is on, from 1 (a bare CR, a LF or a
	// CRLF ends a line); 0 when none can be told: a file too large, a
	// value made in Go.
	Line int
	// Field is the path of the value at fault: keys joined by dots,
	// indices in brackets ("accounts[1].friends[0]"); empty for the file
	// as a whole.
	Field string
	// Reason says what is wrong. It never quotes the file's text beyond
	// the value a check names.
	Reason string
	// Err is the cause when the file could not be read (an
	// *fs.PathError); nil for what is wrong in the file.
	Err error
}

// Error returns "world.yaml: line 12: accounts[1].friends[0]: no account
// of the world has this XUID", each part escaped and clipped (the whole at
// most 400 bytes), since a file's keys and values may be long or hold
// escape codes, and what looks like a credential in the field and the
// reason hidden (safetext.HideOpaque: a token pasted as a name is never
// printed).
func (e *Error) Error() string {
	parts := make([]string, 0, 4)
	if e.File != "" {
		parts = append(parts, safetext.Clip(e.File, 120))
	}
	if e.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", e.Line))
	}
	if e.Field != "" {
		parts = append(parts, safetext.Clip(safetext.HideOpaque(e.Field), 120))
	}
	return strings.Join(append(parts, safetext.Clip(safetext.HideOpaque(e.Reason), 120)), ": ")
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// syntaxError is the Error of a syntax error the read through the JSON
// found: the line, the field the decoder was in (kinds gives the kind of
// each container on its stack) and what is wrong.
func (s *source) syntaxError(err error, kinds func(int) jsontext.Kind) *Error {
	var se *jsontext.SyntacticError
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return &Error{Line: s.line(len(s.json)), Reason: "the file ends inside the document"}
		}
		return &Error{Reason: safetext.Reason(err.Error(), 100)}
	}
	e := &Error{Line: s.line(int(se.ByteOffset)), Field: fieldOf(se.JSONPointer, kinds)}
	switch msg := se.Err.Error(); {
	case errors.Is(se.Err, io.ErrUnexpectedEOF):
		e.Line, e.Reason = s.line(len(s.json)), "the file ends inside the document"
	case errors.Is(se.Err, jsontext.ErrDuplicateName):
		e.Reason = "named twice"
	case strings.HasSuffix(msg, "after top-level value"):
		e.Field, e.Reason = "", "more after the document"
	case msg == "invalid UTF-8":
		e.Reason = "not UTF-8"
	default:
		e.Reason = "not JSON: " + safetext.Reason(msg, 100)
	}
	return e
}

// decodeError is the Error of the decoder's error: the line and field of
// the value it names, and a reason that quotes nothing of the file (the
// decoder's own message quotes a number as written, however long).
func (s *source) decodeError(err error) *Error {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		var syn *jsontext.SyntacticError
		if errors.As(err, &syn) { // the read through found none: not expected
			return s.syntaxError(err, func(int) jsontext.Kind { return '{' })
		}
		return &Error{Reason: safetext.Reason(err.Error(), 100)}
	}
	at, field := s.locate(slices.Collect(se.JSONPointer.Tokens()))
	if se.ByteOffset > 0 { // where the value itself starts, or the unknown name
		at = int(se.ByteOffset)
	}
	return &Error{Line: s.line(at), Field: field, Reason: semanticReason(se)}
}

// semanticReason says why a value cannot be decoded: an unknown field, a
// value of the wrong kind, or what the value's own reader said.
func semanticReason(se *json.SemanticError) string {
	got, want := jsonKindName(se.JSONKind), goKindName(se.GoType)
	switch {
	case errors.Is(se.Err, json.ErrUnknownName):
		return "no such field"
	case got != "" && want != "" && !fits(got, want):
		return got + " where " + want + " belongs"
	case errors.Is(se.Err, strconv.ErrSyntax) && want != "":
		return got + " where " + want + " belongs"
	case errors.Is(se.Err, strconv.ErrRange):
		return "a number out of range for this field"
	case se.Err != nil:
		return safetext.Reason(se.Err.Error(), 100)
	}
	return "cannot be read"
}

// jsonKindName names a JSON kind as an error says it.
func jsonKindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "a list"
	}
	return ""
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	jsonReader      = reflect.TypeFor[json.UnmarshalerFrom]()
)

// goKindName names what a Go type is read from, as an error says it; ""
// for a type that reads itself from JSON.
func goKindName(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch p := reflect.PointerTo(t); {
	case p.Implements(jsonUnmarshaler), p.Implements(jsonReader):
		return ""
	case p.Implements(textUnmarshaler):
		return "a string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return ""
}

// fits reports whether a JSON value of kind got can be a Go value read
// from want.
func fits(got, want string) bool {
	if got == "a number" {
		return strings.Contains(want, "number")
	}
	return got == want
}
