package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xblgo/fgrl/datafile"
	"github.com/xblgo/fgrl/internal/safetext"
)

// scriptFile is the kind of a script's file: its rules and answers are
// bounded as check bounds them, so that a file of empty ones is refused
// before they are decoded.
var scriptFile = datafile.Kind{Name: "script", MaxBytes: MaxScriptBytes, Lists: map[string]int{
	"/rules":           maxScriptRules,
	"/rules/*/answers": maxScriptAnswers,
}, Totals: map[string]int{"/rules/*/answers": maxAnswersInAll}}

var scriptFaults = []string{"reset", "hang", "truncate"}

// ReadScript reads a Script from a script file, JSON or YAML (at most
// MaxScriptBytes), and checks it as SetScript does. What is wrong is a
// *datafile.Error naming the line and field. A body file needs LoadScript.
func ReadScript(r io.Reader) (Script, error) {
	var s Script
	err := scriptFile.Read(r, &s, func() error {
		if err := s.check(); err != nil {
			return err
		}
		return s.noBodyFile("a body file needs a script read from a file (LoadScript, xblcall mock --script)")
	})
	if err != nil {
		return Script{}, err
	}
	return s, nil
}

// LoadScript reads the named script file as ReadScript reads one, and the
// body files its answers name, which become their bodies. A body file is
// named relative to the script's directory and must be in it: a name
// that leads out of it ("../", an absolute path, a symbolic link) is
// refused, so that a script taken from elsewhere cannot serve the user's
// other files.
func LoadScript(name string) (Script, error) {
	var s Script
	err := scriptFile.Load(name, &s, func() error {
		if err := s.check(); err != nil {
			return err
		}
		return s.readBodies(filepath.Dir(name))
	})
	if err != nil {
		return Script{}, err
	}
	return s, nil
}

// scriptError is what is wrong with a script, at field.
func scriptError(field, reason string) error {
	return &datafile.Error{File: "script", Field: field, Reason: reason}
}

// noBodyFile refuses an answer that names a body file, for why.
func (s *Script) noBodyFile(why string) error {
	for i, rl := range s.Rules {
		for j, a := range rl.Answers {
			if a.BodyFile != "" {
				return scriptError(fmt.Sprintf("rules[%d].answers[%d].bodyFile", i, j), why)
			}
		}
	}
	return nil
}

// readBodies reads the body files the answers name, within dir, into
// their bodies; together they are at most MaxScriptBytes.
func (s *Script) readBodies(dir string) error {
	budget := MaxScriptBytes
	for i := range s.Rules {
		for j := range s.Rules[i].Answers {
			a := &s.Rules[i].Answers[j]
			if a.BodyFile == "" {
				continue
			}
			b, err := readBodyFile(dir, a.BodyFile, budget)
			if err != nil {
				return scriptError(fmt.Sprintf("rules[%d].answers[%d].bodyFile", i, j), err.Error())
			}
			budget -= len(b)
			a.Body, a.BodyFile = textBody(b), ""
		}
	}
	return nil
}

// readBodyFile reads the file name in dir, of at most limit bytes. It is
// opened in dir as a root (os.OpenInRoot): no name leads out of it.
func readBodyFile(dir, name string, limit int) ([]byte, error) {
	f, err := os.OpenInRoot(dir, name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot open %s in the script's directory: %v", safetext.Quote(name, 60), err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err == nil && len(b) > limit {
		err = fmt.Errorf("the script's body files are larger than %d bytes together", MaxScriptBytes)
	}
	return b, err
}

// textBody is a body file's bytes as an answer's Body: JSON as it is,
// anything else as a JSON string of its text.
func textBody(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(bytes.TrimSpace(b))
	}
	s, _ := json.Marshal(string(b))
	return s
}

// check reports the first thing wrong with s, as a *datafile.Error.
func (s *Script) check() error {
	if len(s.Rules) > maxScriptRules {
		return scriptError("rules", fmt.Sprintf("more than %d rules", maxScriptRules))
	}
	answers := 0
	for i, r := range s.Rules {
		if err := r.check(fmt.Sprintf("rules[%d]", i)); err != nil {
			return err
		}
		if answers += len(r.Answers); answers > maxAnswersInAll {
			return scriptError(fmt.Sprintf("rules[%d].answers", i), fmt.Sprintf("more than %d answers in all the rules", maxAnswersInAll))
		}
	}
	return nil
}

func (r *ScriptRule) check(f string) error {
	bad := func(field, reason string) error { return scriptError(f+field, reason) }
	m := r.Match
	switch n := btoi(m.Path != "") + btoi(m.PathPrefix != "") + btoi(m.PathPattern != ""); {
	case n > 1:
		return bad(".match", "name one of path, pathPrefix and pathPattern")
	case m.Path != "" && !strings.HasPrefix(m.Path, "/"), m.PathPrefix != "" && !strings.HasPrefix(m.PathPrefix, "/"):
		return bad(".match", "a path starts with /")
	case m.PathPattern != "" && !validPattern(m.PathPattern):
		return bad(".match.pathPattern", "not a path pattern such as /users/{user}/profile/settings")
	case m.Method != "" && !isToken(m.Method):
		return bad(".match.method", "not an HTTP method")
	case len(r.Answers) == 0:
		return bad(".answers", "a rule needs an answer")
	case len(r.Answers) > maxScriptAnswers:
		return bad(".answers", fmt.Sprintf("more than %d answers", maxScriptAnswers))
	case r.Then != "" && r.Then != "repeat" && r.Then != "mock":
		return bad(".then", `want "repeat" or "mock"`)
	}
	for j, a := range r.Answers {
		af := fmt.Sprintf(".answers[%d]", j)
		switch {
		case a.Status != 0 && (a.Status < 200 || a.Status > 599):
			// A 1xx is informational: a server sends it ahead of an
			// answer, and a client (net/http's) skips it and reads the
			// answer after it, which a script's one status cannot give.
			return bad(af+".status", "a status is 200 to 599 (a 1xx is sent ahead of an answer, never as one)")
		case a.Fault != "" && !slices.Contains(scriptFaults, a.Fault):
			return bad(af+".fault", `want "reset", "hang" or "truncate"`)
		case a.Latency < 0 || time.Duration(a.Latency) > maxScriptLatency:
			return bad(af+".latency", "a latency is 0 to 10m")
		case len(a.Body) > 0 && a.BodyFile != "":
			return bad(af, "name a body or a bodyFile, not both")
		}
		if reason := headersProblem(a.Headers); reason != "" {
			return bad(af+".headers", reason)
		}
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// validPattern reports whether p parses as a route pattern.
func validPattern(p string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	pat(p)
	return true
}

// framingHeaders are the headers net/http's server and client write and
// read themselves, to frame a body or keep a connection, which a client
// never finds as a handler set them.
var framingHeaders = []string{"Content-Length", "Transfer-Encoding", "Trailer", "Connection", "Keep-Alive", "Proxy-Connection", "Te", "Upgrade"}

// headersProblem says what is wrong with an answer's headers, or "": a
// name must be a token (RFC 9110, section 5.1), which net/http writes
// (it drops any other without a word); a value holds no control character
// but tab (section 5.5; a Go client fails the whole answer on one,
// "malformed MIME header line"); two names may not differ only in case,
// which net/http writes as one, either of the two; and the headers that
// frame the body or belong to the connection (framingHeaders) are the
// server's: a script that wants a body cut short names the "truncate"
// fault.
func headersProblem(h map[string]string) string {
	seen := make(map[string]string, len(h))
	for _, k := range slices.Sorted(maps.Keys(h)) {
		c := http.CanonicalHeaderKey(k)
		switch other, dup := seen[c]; {
		case !isToken(k):
			return "a header's name is a token (letters, digits and !#$%&'*+-.^_`|~): " + safetext.Quote(k, 40)
		case slices.Contains(framingHeaders, c):
			return "the server frames the body and keeps the connection: a script sets no " + c + ` (the fault "truncate" cuts a body short)`
		case strings.ContainsFunc(h[k], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			return "a header's value holds no control character but tab: " + safetext.Quote(k, 40)
		case dup:
			return fmt.Sprintf("the header %s is named twice (%s): names ignore case", safetext.Quote(k, 40), safetext.Quote(other, 40))
		}
		seen[c] = k
	}
	return ""
}

// isToken reports whether s is an RFC 9110 token: one or more of the
// letters, digits and !#$%&'*+-.^_`|~.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
