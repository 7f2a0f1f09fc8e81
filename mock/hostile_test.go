package mock

import (
	"bytes"
	"strings"
)

// hostileFile is a file made to cost its reader: deep, long, wide or
// wrong many times over.
type hostileFile struct {
	name string
	file string // "world" or "script"
	gen  func() []byte
	data []byte // gen's, once made
}

// made returns f with its data made.
func (f hostileFile) made() hostileFile {
	f.data = f.gen()
	return f
}

// read reads the file as ReadWorld or ReadScript does.
func (f hostileFile) read() error {
	var err error
	if f.file == "world" {
		_, err = ReadWorld(bytes.NewReader(f.data))
	} else {
		_, err = ReadScript(bytes.NewReader(f.data))
	}
	return err
}

// readSource reads the file as readFile does, and returns the source.
func (f hostileFile) readSource() (*source, error) {
	var s source
	if f.file == "world" {
		var w World
		return &s, s.read(f.data, "world", &w, w.check)
	}
	var sc Script
	return &s, s.read(f.data, "script", &sc, sc.check)
}

// hostileFiles returns files of about n bytes (at most n, at least n/2)
// of every shape the readers must refuse in time linear in n, each made
// when asked (made), so that a benchmark of one holds only its own.
func hostileFiles(n int) []hostileFile {
	// fill repeats unit, then closes with tail, within n bytes.
	fill := func(head, unit, sep, tail string) func() []byte {
		return func() []byte { return fillBytes(n, head, unit, sep, tail) }
	}
	deep := func(open, inner, close string, depth int) string {
		return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
	}
	// A script whose first answer's body holds the units and whose last
	// answer is wrong: the error is found after the whole file.
	body := func(unit string) func() []byte {
		return fill(`{"rules": [{"match": {}, "answers": [{"body": [`, unit, ",", `]}, {"status": 9}]}]}`)
	}
	yamlBody := func(unit string) func() []byte {
		return fill("rules:\n  - match: {}\n    answers:\n      - body:\n", "          - "+unit+"\n", "", "      - status: 9\n")
	}
	// Deeper as the file is longer, within encoding/json's and yaml.v3's
	// own bound of 10000 levels.
	depth := min(n/16, 5000)
	return []hostileFile{
		{name: "json deep arrays, unclosed", file: "script", gen: fill(`{"rules": `, "[", "", "")},
		{name: "json deep arrays", file: "script", gen: body(deep("[", "", "]", depth))},
		{name: "json deep objects", file: "script", gen: body(deep(`{"a":`, "1", "}", depth))},
		{name: "json many errors", file: "world", gen: fill(`{"accounts": [`, `{"xuid": "x", "tier": 1, "no": 2}`, ",", `]}`)},
		{name: "json error at the end", file: "script", gen: body(`{"a": [1, "b", {"c": null}]}`)},
		{name: "json huge string", file: "world", gen: fill(`{"accounts": [{"xuid": "`, "1", "", `"}]}`)},
		{name: "json huge escaped string", file: "world", gen: fill(`{"accounts": [{"xuid": "1", "gamertag": "`, `\u0041`, "", `"}]}`)},
		{name: "json huge key", file: "world", gen: fill(`{"`, "k", "", `": 1}`)},
		{name: "json many keys", file: "world", gen: fill(`{"accounts": [{"xuid": "1", "titles": [{"titleId": "1", "achievements": {`, `"1": 1`, ",", `, "9": 1}}]}]}`)},
		{name: "json long line", file: "world", gen: fill(`{"accounts": [{"xuid": "1"`, " ", "", `, "tier": "x"}]}`)},
		{name: "json many lines", file: "world", gen: fill(`{"accounts": [{"xuid": "1"`, "\n", "", `, "tier": "x"}]}`)},
		{name: "yaml deep flow sequences", file: "script", gen: yamlBody(deep("[", "", "]", depth))},
		{name: "yaml deep flow mappings", file: "script", gen: yamlBody(deep("{a: ", "1", "}", depth))},
		{name: "yaml deep block sequences", file: "script", gen: yamlBody(strings.Repeat("- ", depth) + "1")},
		{name: "yaml many errors", file: "world", gen: fill("accounts:\n", "  - xuid: x\n    tier: 1\n    no: 2\n", "", "")},
		{name: "yaml error at the end", file: "script", gen: yamlBody("{a: [1, b, {c: null}]}")},
		{name: "yaml huge string", file: "world", gen: fill("accounts:\n  - xuid: \"", "1", "", "\"\n")},
		{name: "yaml huge keys", file: "script", gen: func() []byte { return nestedKeys(n) }},
		{name: "yaml many keys", file: "script", gen: yamlBody("{a: 1, b: 2, c: 3, d: 4, e: 5, f: 6}")},
		{name: "yaml long line", file: "script", gen: fill("rules:\n  - match: {}\n    answers:\n      - body: [", "1", ", ", "]\n      - status: 9\n")},
		{name: "yaml many lines", file: "world", gen: fill("accounts:\n  - xuid: \"1\"\n", "#\n", "", "    tier: x\n")},
	}
}

// fillBytes is head, k units with sep between them, and tail: the most
// that fits in n bytes (at least one unit).
func fillBytes(n int, head, unit, sep, tail string) []byte {
	k := max(1, (n-len(head)-len(tail))/(len(unit)+len(sep)))
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(head)
	for i := range k {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(unit)
	}
	b.WriteString(tail)
	return b.Bytes()
}

// nestedKeys is a script whose first answer's body nests 50 mappings,
// each under an explicit key of about n/64 bytes, and whose last answer
// is wrong.
func nestedKeys(n int) []byte {
	const levels = 50
	key := strings.Repeat("k", n/64)
	var b bytes.Buffer
	b.WriteString("rules:\n  - match: {}\n    answers:\n      - body:\n")
	for i := range levels {
		indent := strings.Repeat("  ", 5+i)
		b.WriteString(indent + "? " + key + "\n" + indent + ":\n")
	}
	b.WriteString(strings.Repeat("  ", 5+levels) + "1\n      - status: 9\n")
	return b.Bytes()
}
