package mock

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/xblgo/fgrl/internal/safetext"
)

// The files the mock reads (a world, a script) are JSON or YAML, read
// strictly: an unknown field, a value of the wrong type or one that cannot
// be is refused whole with the line and the field. YAML is turned into
// JSON and read by the same decoder, marked with the YAML line of each
// value, so both forms say the same thing. Either form nests at most
// maxNesting levels, and reading a file takes time and memory linear in
// its length (RELIABILITY.md has the figures).

// FileError is what is wrong with a file the mock reads: which file
// ("world", "script"), the field (such as "accounts[1].friends[0]") and,
// for one read from text, the line it is on (0 otherwise).
type FileError struct {
	File   string
	Line   int
	Field  string
	Reason string
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("mock: " + e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Reason
}

// MaxYAMLBytes bounds a file written in YAML (a world, a script): the YAML
// parser holds a file's whole tree, about a hundred bytes for each byte
// read, so a larger file would take seconds and gigabytes to refuse.
// Files in JSON are read as they stream and may be as large as their
// kind's bound (MaxWorldBytes, MaxScriptBytes).
const MaxYAMLBytes = 1 << 20

// readFile reads r, JSON or YAML of at most limit bytes, strictly into v,
// then runs check, which reports a *FileError naming a field. Every error
// is a *FileError of file, with the line where it can be told.
func readFile(r io.Reader, file string, limit int, v any, check func() error) error {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("mock: %s: %w", file, err)
	}
	if len(data) > limit {
		return &FileError{File: file, Reason: fmt.Sprintf("larger than %d bytes", limit)}
	}
	var s source
	return s.read(data, file, v, check)
}

// source is a file as JSON and, for one written in YAML, the YAML line of
// each of its values. Reading one takes time and memory linear in its
// length: it is decoded once, and an error's field and line cost a few
// walks through it.
type source struct {
	json  []byte
	yaml  bool
	marks []lineMark // YAML only: where each value and key is in the JSON, in order
	// scanned counts the bytes the walks and line counts read, for the
	// test that they stay in proportion to the file.
	scanned int
}

// lineMark says that the JSON from at on was written from YAML line line.
// Both fit in 32 bits: the JSON of a file of MaxWorldBytes is at most six
// times as long (a character escaped as \u0000).
type lineMark struct{ at, line int32 }

// read reads data, JSON or YAML, strictly into v, then runs check.
func (s *source) read(data []byte, file string, v any, check func() error) error {
	s.json = data
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] != '{' && t[0] != '[' {
		if len(data) > MaxYAMLBytes {
			return &FileError{File: file, Reason: fmt.Sprintf("YAML larger than %d bytes: write a file this large in JSON", MaxYAMLBytes)}
		}
		if err := s.fromYAML(data); err != nil {
			err.File = file
			return err
		}
	}
	if err := s.decode(v); err != nil {
		err.File = file
		return err
	}
	if err := check(); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.File, fe.Line = file, s.line(parseField(fe.Field))
		}
		return err
	}
	return nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// fromYAML turns YAML into the source's JSON and notes its lines.
func (s *source) fromYAML(data []byte) *FileError {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		fe := &FileError{Reason: "not YAML: " + reasonOf(strings.TrimPrefix(msg, "yaml: "))}
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			fe.Line, _ = strconv.Atoi(m[1])
			fe.Reason = "not YAML: " + reasonOf(msg[len(m[0]):])
		}
		return fe
	}
	w := yamlWriter{json: make([]byte, 0, len(data))}
	if err := w.value(&doc, 0); err != nil {
		return err
	}
	s.json, s.yaml, s.marks = w.json, true, w.marks
	return nil
}

// maxNesting bounds how deep a file's values nest, in JSON and in YAML:
// the document's value is at depth 1, a value in it at depth 2.
const maxNesting = 64

// line returns the line of the value at path: in YAML its key's, or its
// own in a list; in JSON where it starts.
func (s *source) line(path []any) int { return s.lineAt(s.offsetOf(path)) }

// lineAt returns the line of what starts at off in the source's JSON: in
// YAML the line it was written from; in JSON the line its token starts
// on, past the separators before it.
func (s *source) lineAt(off int) int {
	if s.yaml {
		i, _ := slices.BinarySearchFunc(s.marks, off, func(m lineMark, off int) int { return cmp.Compare(int(m.at), off+1) })
		if i == 0 {
			return 0
		}
		return int(s.marks[i-1].line)
	}
	off = min(max(off, 0), len(s.json))
	for off < len(s.json) && strings.IndexByte(" \t\r\n,:", s.json[off]) >= 0 {
		off++
	}
	s.scanned += off
	return 1 + bytes.Count(s.json[:off], []byte{'\n'})
}

// decode reads the source's JSON strictly into v.
func (s *source) decode(v any) *FileError {
	if at := s.tooDeep(); at >= 0 {
		return &FileError{Line: s.lineAt(at), Reason: "nested too deep"}
	}
	dec := json.NewDecoder(bytes.NewReader(s.json))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return s.decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &FileError{Line: s.lineAt(int(dec.InputOffset())), Reason: "more after the document"}
	}
	return nil
}

// decodeError turns the JSON decoder's error into a FileError with the
// field and line.
func (s *source) decodeError(err error) *FileError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &FileError{Line: s.lineAt(int(syn.Offset)), Reason: "not JSON: " + reasonOf(syn.Error())}
	case errors.As(err, &typ):
		path := s.pathAt(int(typ.Offset))
		path = path[:keysUpTo(path, strings.Count(typ.Field, ".")+1)]
		return &FileError{Line: s.line(path), Field: fieldText(path),
			Reason: fmt.Sprintf("a %s where %s belongs", typ.Value, kindOf(typ.Type.String()))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &FileError{Line: s.lineAt(len(s.json)), Reason: "the file ends inside the document"}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		path := s.keyPath(name)
		return &FileError{Line: s.line(path), Field: fieldText(path), Reason: "no such field"}
	}
	return &FileError{Reason: safetext.Clip(err.Error(), 120)}
}

// keysUpTo returns how many leading components of path hold its first n
// keys (and the indices between them).
func keysUpTo(path []any, n int) int {
	for i, c := range path {
		if _, key := c.(string); key {
			if n--; n < 0 {
				return i
			}
		}
	}
	return len(path)
}

// reasonOf is a decoder's reason up to the first input it quotes, so no
// fragment of the input reaches the message.
func reasonOf(msg string) string {
	return safetext.Reason(strings.TrimPrefix(msg, "json: "), 120)
}

// kindOf names a Go type as a file's reader knows it.
func kindOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	}
	return "an object"
}

// fieldText is a path as a field for an error: clipped and escaped, since
// a file's keys may be long, or hold escape codes.
func fieldText(path []any) string { return safetext.Clip(fieldOf(path), 120) }

// fieldOf writes a path as a field: keys joined by dots, indices in
// brackets ("accounts[1].friends[0]").
func fieldOf(path []any) string {
	var b strings.Builder
	for _, c := range path {
		switch c := c.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", c)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(c)
		}
	}
	return b.String()
}

// parseField splits a field ("accounts[1].friends[0]") into its path:
// keys and indices.
func parseField(f string) []any {
	var path []any
	for part := range strings.SplitSeq(f, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			path = append(path, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			n, _ := strconv.Atoi(idx)
			path = append(path, n)
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return path
}
