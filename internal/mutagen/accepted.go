package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// A block is one entry of mutagen's tables: a line at the left margin and
// the indented lines under it. Blank lines and lines starting with # are
// comments.
type block struct {
	line int
	head string
	body []string
}

// readBlocks reads a table's entries; name is for errors.
func readBlocks(r io.Reader, name string) ([]block, error) {
	var out []block
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		switch {
		case strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#"):
		case text[0] == ' ' || text[0] == '\t':
			if len(out) == 0 {
				return nil, fmt.Errorf("%s:%d: an indented line before any entry", name, n)
			}
			out[len(out)-1].body = append(out[len(out)-1].body, strings.TrimSpace(text))
		default:
			out = append(out, block{line: n, head: strings.TrimRight(text, " \t")})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// An acceptance names a mutant that survives because it changes nothing a
// caller can observe, with the reason.
type acceptance struct {
	key    string // as mutant.key prints it
	file   string
	reason string
	used   bool
}

// readAccepted reads the accepted-equivalents file: per entry, a mutant's
// key (file: function: line with the operator in brackets -> new operator)
// and, indented under it, why no test can tell it apart.
func readAccepted(name string) ([]*acceptance, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseAccepted(f, name)
}

func parseAccepted(r io.Reader, name string) ([]*acceptance, error) {
	blocks, err := readBlocks(r, name)
	if err != nil {
		return nil, err
	}
	var out []*acceptance
	seen := map[string]bool{}
	for _, b := range blocks {
		file, rest, ok := strings.Cut(b.head, ": ")
		if !ok || !strings.Contains(rest, " -> ") || !strings.Contains(rest, "[") {
			return nil, fmt.Errorf("%s:%d: want FILE: FUNC: LINE WITH [OP] -> OP, got %q", name, b.line, b.head)
		}
		if len(b.body) == 0 {
			return nil, fmt.Errorf("%s:%d: %s: no reason given", name, b.line, b.head)
		}
		if seen[b.head] {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", name, b.line, b.head)
		}
		seen[b.head] = true
		out = append(out, &acceptance{key: b.head, file: file, reason: strings.Join(b.body, " ")})
	}
	return out, nil
}

// match returns the acceptance of the mutant with key k, marking it used.
func match(acc []*acceptance, k string) *acceptance {
	for _, a := range acc {
		if a.key == k {
			a.used = true
			return a
		}
	}
	return nil
}
