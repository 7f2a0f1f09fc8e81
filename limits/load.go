package limits

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/throttle"
)

// Bounds on limits data, so a hostile or corrupt file cannot exhaust memory.
const (
	MaxSize  = 1 << 20 // bytes
	MaxRules = 4096
)

// Error reports a problem in limits data: where it is and what is wrong.
type Error struct {
	Line, Column int    // 1-based position of the offending value; 0 when unknown
	Field        string // such as "rules[3].burst"; empty for a syntax error
	Msg          string
}

// Error returns "limits: line 12 col 5: rules[3].burst: must not be negative".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("limits: ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d col %d: ", e.Line, e.Column)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadFile reads limits data from a file; see Parse.
func LoadFile(name string) (*Limits, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	defer f.Close()
	return Load(f)
}

// Load reads limits data of at most MaxSize bytes from r; see Parse.
func Load(r io.Reader) (*Limits, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("limits: reading limits: %w", err)
	}
	return Parse(b)
}

// Parse compiles limits data: a JSON object with "revision", "source",
// optional "fallback" (a rule without hosts) and "rules" (an array of Rule, in
// match order). Unknown keys are errors, so a misspelt field is never silently
// ignored. Errors are *Error, naming the line and the field.
func Parse(data []byte) (*Limits, error) {
	if len(data) > MaxSize {
		return nil, &Error{Msg: fmt.Sprintf("larger than %d bytes", MaxSize)}
	}
	p := parser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	if err := p.syntax(); err != nil {
		return nil, err
	}
	l, err := p.document()
	if err != nil {
		return nil, err
	}
	if err := l.compile(); err != nil {
		return nil, err
	}
	return l, nil
}

type parser struct {
	data []byte
	dec  *json.Decoder
}

func (p *parser) document() (*Limits, error) {
	if err := p.delim('{', ""); err != nil {
		return nil, err
	}
	l := &Limits{}
	seenRules := false
	for p.dec.More() {
		off := p.dec.InputOffset()
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.wrap(err, off, "")
		}
		key, _ := tok.(string)
		switch key {
		case "revision":
			_, err = p.value(&l.Revision, "revision")
		case "source":
			_, err = p.value(&l.Source, "source")
		case "fallback":
			l.Fallback = new(Rule)
			err = p.rule(l.Fallback, "fallback", true)
		case "rules":
			seenRules = true
			l.Rules, err = p.rules()
		default:
			err = p.errAt(off, key, "unknown key")
		}
		if err != nil {
			return nil, err
		}
	}
	if !seenRules {
		return nil, &Error{Field: "rules", Msg: "missing"}
	}
	if _, err := p.dec.Token(); err != nil { // the closing '}'
		return nil, p.wrap(err, p.dec.InputOffset(), "")
	}
	return l, nil
}

func (p *parser) rules() ([]Rule, error) {
	if err := p.delim('[', "rules"); err != nil {
		return nil, err
	}
	var rules []Rule
	for i := 0; p.dec.More(); i++ {
		if i == MaxRules {
			return nil, p.errAt(p.dec.InputOffset(), "rules", fmt.Sprintf("more than %d rules", MaxRules))
		}
		rules = append(rules, Rule{})
		if err := p.rule(&rules[i], fmt.Sprintf("rules[%d]", i), false); err != nil {
			return nil, err
		}
	}
	if _, err := p.dec.Token(); err != nil { // the closing ']'
		return nil, p.wrap(err, p.dec.InputOffset(), "rules")
	}
	return rules, nil
}

// syntax reports the first syntax error with its absolute position; the
// streaming decoder only knows positions relative to its buffer.
func (p *parser) syntax() error {
	if json.Valid(p.data) {
		return nil
	}
	var v any
	err := json.Unmarshal(p.data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset < int64(len(p.data)) {
		return p.errAt(se.Offset-1, "", strings.TrimPrefix(se.Error(), "json: "))
	}
	return p.errAt(int64(len(p.data)), "", "unexpected end of data")
}

// valueStart returns the start of the value that ends at end in raw: the first
// non-space byte after the preceding ':', '[' or ','.
func valueStart(raw []byte, end int64) int64 {
	end = min(max(end, 0), int64(len(raw)))
	i := bytes.LastIndexAny(raw[:end], ":[,")
	return end - int64(len(bytes.TrimLeft(raw[i+1:end], " \t\r\n")))
}

// rule decodes and validates one rule.
func (p *parser) rule(r *Rule, field string, fallback bool) error {
	start, err := p.value(r, field)
	if err != nil {
		return err
	}
	if f, msg := r.validate(fallback); msg != "" {
		return p.errAt(start, field+f, msg)
	}
	return nil
}

// value decodes the next value into v, rejecting unknown keys, and returns
// where the value starts. The value is read raw and decoded on its own, so
// an error's offset is relative to the value's start and can be placed
// exactly; the streaming decoder only knows offsets relative to its buffer.
func (p *parser) value(v any, field string) (int64, error) {
	var raw json.RawMessage
	if err := p.dec.Decode(&raw); err != nil {
		return 0, p.wrap(err, p.dec.InputOffset(), field)
	}
	start := p.skipSpace(p.dec.InputOffset() - int64(len(raw)))
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		f := field
		if te.Field != "" {
			f += "." + te.Field
		}
		return start, p.errAt(start+valueStart(raw, te.Offset), f, fmt.Sprintf("want %s, found %s", te.Type, te.Value))
	case err != nil:
		return start, p.errAt(start, field, strings.TrimPrefix(err.Error(), "json: "))
	}
	return start, nil
}

func (p *parser) delim(want json.Delim, field string) error {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return p.wrap(err, off, field)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return p.errAt(off, field, fmt.Sprintf("want '%c', found %v", rune(want), tok))
	}
	return nil
}

// wrap turns an error of the streaming decoder into a *Error. After
// syntax has passed, only the end of the data can cause one.
func (p *parser) wrap(err error, off int64, field string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.errAt(int64(len(p.data)), field, "unexpected end of data")
	}
	return p.errAt(p.skipSpace(off), field, strings.TrimPrefix(err.Error(), "json: "))
}

// skipSpace returns the offset of the first byte at or after off that is
// neither white space nor a separator.
func (p *parser) skipSpace(off int64) int64 {
	rest := p.data[min(max(off, 0), int64(len(p.data))):]
	return int64(len(p.data) - len(bytes.TrimLeft(rest, " \t\r\n,:")))
}

func (p *parser) errAt(off int64, field, msg string) error {
	off = min(max(off, 0), int64(len(p.data)))
	before := p.data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return &Error{Line: line, Column: col, Field: field, Msg: msg}
}

// validate returns the offending sub-field and a message, or "" when r is
// well formed.
func (r *Rule) validate(fallback bool) (field, msg string) {
	switch {
	case r.Service == "":
		return ".service", "missing"
	case strings.ContainsAny(r.Service+r.Class, "/# \t"):
		return ".service", "service and class may not contain '/', '#' or spaces"
	case !fallback && len(r.Hosts) == 0:
		return ".hosts", "missing"
	case r.Burst < 0:
		return ".burst", "must not be negative"
	case r.Sustain < 0:
		return ".sustain", "must not be negative"
	case r.Burst > throttle.MaxLimit:
		return ".burst", fmt.Sprintf("must be at most %d", throttle.MaxLimit)
	case r.Sustain > throttle.MaxLimit || r.PublisherSustain > throttle.MaxLimit:
		return ".sustain", fmt.Sprintf("must be at most %d", throttle.MaxLimit)
	case r.Burst == 0 && r.Sustain == 0:
		return ".sustain", "burst and sustain are both zero"
	case r.PublisherSustain < 0:
		return ".publisherSustain", "must not be negative"
	case r.Certification < 0:
		return ".certification", "must not be negative"
	}
	for i, h := range r.Hosts {
		if !validHost(h) {
			return fmt.Sprintf(".hosts[%d]", i), safetext.Quote(h, 64) + " is not a host name or pattern"
		}
	}
	for i, m := range r.Methods {
		if !slices.Contains(httpMethods, strings.ToUpper(m)) {
			return fmt.Sprintf(".methods[%d]", i), safetext.Quote(m, 64) + " is not an HTTP method"
		}
	}
	for i, path := range r.Paths {
		if !strings.HasPrefix(path, "/") {
			return fmt.Sprintf(".paths[%d]", i), safetext.Quote(path, 64) + " does not start with '/'"
		}
	}
	return "", ""
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

func validHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := lower(h[i])
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// compile fills the derived fields and the host index; it also checks that
// rules sharing a scope agree on their limits, since they share a counter.
func (l *Limits) compile() error {
	l.exact = make(map[string][]int)
	scopes := make(map[string]int)
	for i := range l.Rules {
		r := &l.Rules[i]
		r.scope = scopeOf(r.Service, r.Class)
		if j, ok := scopes[r.scope]; ok && !sameLimits(&l.Rules[j], r) {
			return &Error{Field: fmt.Sprintf("rules[%d]", i),
				Msg: fmt.Sprintf("scope %s has other limits than rules[%d]", safetext.Quote(r.scope, 64), j)}
		}
		scopes[r.scope] = i
		for _, h := range r.Hosts {
			h = strings.ToLower(h)
			if strings.Contains(h, "*") {
				l.globs = append(l.globs, hostGlob{pattern: h, rule: i})
				continue
			}
			if !slices.Contains(l.exact[h], i) {
				l.exact[h] = append(l.exact[h], i)
			}
		}
	}
	if l.Fallback != nil {
		l.Fallback.scope = scopeOf(l.Fallback.Service, l.Fallback.Class)
	}
	return nil
}

func sameLimits(a, b *Rule) bool {
	return a.Burst == b.Burst && a.Sustain == b.Sustain &&
		a.PublisherSustain == b.PublisherSustain && a.Store == b.Store
}
