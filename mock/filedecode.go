package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/xblgo/fgrl/internal/safetext"
)

// The files the mock reads (a world, a script) are JSON or YAML, read
// strictly: an unknown field, a value of the wrong type or one that cannot
// be is refused whole with the line and the field. YAML is turned into
// JSON and read by the same decoder, with a map from each field to its
// YAML line, so both forms say the same thing.

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
	src := source{json: data}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] != '{' && t[0] != '[' {
		if err := src.fromYAML(data); err != nil {
			err.File = file
			return err
		}
	}
	if err := src.decode(v); err != nil {
		err.File = file
		return err
	}
	if err := check(); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.File, fe.Line = file, src.line(parseField(fe.Field))
		}
		return err
	}
	return nil
}

// source is a file as JSON, and for one written in YAML the line of each
// field.
type source struct {
	json  []byte
	lines map[string]int // YAML only: field path -> line
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
	s.lines = map[string]int{}
	v, err := s.walk(&doc, nil, 0)
	if err != nil {
		return err
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		return &FileError{Reason: "not a document of JSON's kinds"}
	}
	s.json = b
	return nil
}

// maxNesting bounds how deep a file's values nest.
const maxNesting = 64

// walk returns the JSON value of a YAML node and notes each field's line.
func (s *source) walk(n *yaml.Node, path []any, depth int) (any, *FileError) {
	if depth > maxNesting {
		return nil, &FileError{Line: n.Line, Reason: "nested too deep"}
	}
	s.lines[fieldOf(path)] = n.Line
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return s.walk(n.Content[0], path, depth+1)
	case yaml.AliasNode:
		return nil, &FileError{Line: n.Line, Field: fieldOf(path), Reason: "aliases are not read"}
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := s.walk(c, append(path, i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := out[k]; dup {
				return nil, &FileError{Line: n.Content[i].Line, Field: fieldOf(append(path, k)), Reason: "named twice"}
			}
			v, err := s.walk(n.Content[i+1], append(path, k), depth+1)
			if err != nil {
				return nil, err
			}
			s.lines[fieldOf(append(path, k))] = n.Content[i].Line
			out[k] = v
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, &FileError{Line: n.Line, Field: fieldOf(path), Reason: "not a value"}
	}
	if _, isMap := v.(map[string]any); isMap {
		return nil, &FileError{Line: n.Line, Field: fieldOf(path), Reason: "not a value"}
	}
	return v, nil
}

// line returns the line of the field at path: in YAML its own, in JSON
// where its value starts.
func (s *source) line(path []any) int {
	if s.lines != nil {
		for ; ; path = path[:len(path)-1] {
			if l, ok := s.lines[fieldOf(path)]; ok || len(path) == 0 {
				return l
			}
		}
	}
	return lineAt(s.json, offsetOf(s.json, path))
}

// decode reads the source's JSON strictly into v.
func (s *source) decode(v any) *FileError {
	dec := json.NewDecoder(bytes.NewReader(s.json))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return s.decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &FileError{Line: s.lineOfOffset(dec.InputOffset()), Reason: "more after the document"}
	}
	return nil
}

// lineOfOffset returns the line of what starts at a JSON offset.
func (s *source) lineOfOffset(off int64) int {
	if s.lines != nil {
		return s.line(pathAt(s.json, off))
	}
	return lineAt(s.json, off)
}

// decodeError turns the JSON decoder's error into a FileError with the
// field and line.
func (s *source) decodeError(err error) *FileError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &FileError{Line: s.lineOfOffset(syn.Offset), Reason: "not JSON: " + reasonOf(syn.Error())}
	case errors.As(err, &typ):
		path := pathAt(s.json, typ.Offset)
		path = path[:keysUpTo(path, strings.Count(typ.Field, ".")+1)]
		return &FileError{Line: s.line(path), Field: fieldOf(path),
			Reason: fmt.Sprintf("a %s where %s belongs", typ.Value, kindOf(typ.Type.String()))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &FileError{Line: lineAt(s.json, int64(len(s.json))), Reason: "the file ends inside the document"}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		at := int64(bytes.Index(s.json, []byte(strconv.Quote(name))))
		path := pathAt(s.json, valueAfterKey(s.json, at))
		return &FileError{Line: s.line(path), Field: safetext.Clip(fieldOf(path), 80), Reason: "no such field"}
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

// valueAfterKey returns the offset of the value after the key at at.
func valueAfterKey(data []byte, at int64) int64 {
	if at < 0 {
		return 0
	}
	i := int(at) + 1
	for i < len(data) && data[i] != '"' {
		if data[i] == '\\' {
			i++
		}
		i++
	}
	for i++; i < len(data) && strings.IndexByte(" \t\r\n:", data[i]) >= 0; i++ {
	}
	return int64(i)
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

// jsonFrame is a container being walked: an object (its current key) or
// an array (its current index), and where its current value starts.
type jsonFrame struct {
	obj, wantKey bool
	key          string
	idx          int
	at           int64
}

// walkJSON calls visit with the path and start offset of every value of
// data (valid JSON), in order, until visit returns false.
func walkJSON(data []byte, visit func(path []any, at int64) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []jsonFrame
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	path := func() []any {
		p := make([]any, 0, len(stack))
		for _, f := range stack {
			if f.obj {
				p = append(p, f.key)
			} else {
				p = append(p, f.idx)
			}
		}
		return p
	}
	for {
		pos := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return
		}
		n := len(stack)
		if n > 0 && (tok == json.Delim('}') || tok == json.Delim(']')) {
			stack = stack[:n-1]
			done()
			continue
		}
		if n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			stack[n-1].key, stack[n-1].wantKey, stack[n-1].at = tok.(string), false, pos
			continue
		}
		if n > 0 && !stack[n-1].obj {
			stack[n-1].at = pos
		}
		at := pos
		if n > 0 {
			at = stack[n-1].at
		}
		if !visit(path(), at) {
			return
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, jsonFrame{obj: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, jsonFrame{})
		default:
			done()
		}
	}
}

// offsetOf returns where in data the value at path starts (its key, for a
// value in an object); the nearest enclosing value's where path goes
// further than data.
func offsetOf(data []byte, path []any) int64 {
	best := int64(0)
	walkJSON(data, func(p []any, at int64) bool {
		if len(p) <= len(path) && samePath(p, path[:len(p)]) {
			best = at
			return len(p) < len(path)
		}
		return true
	})
	return best
}

// pathAt returns the path of the last value that starts before off.
func pathAt(data []byte, off int64) []any {
	var last []any
	walkJSON(data, func(p []any, at int64) bool {
		if at >= off {
			return false
		}
		last = p
		return true
	})
	return last
}

func samePath(a, b []any) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// lineAt returns the line of data that the token at or after offset
// starts on (1-based), skipping the separators before it.
func lineAt(data []byte, offset int64) int {
	off := int(min(max(offset, 0), int64(len(data))))
	for off < len(data) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}
