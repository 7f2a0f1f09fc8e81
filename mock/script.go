package mock

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xblgo/fgrl/throttle"
)

// Script is a test's scripted answers: each rule answers the requests it
// matches with its answers in sequence, before the mock's own behaviour.
// Rules are tried in order; the first that matches answers. Read one with
// ReadScript or LoadScript (JSON or YAML), set it with Config.Script,
// Handler.SetScript, the admin API (PUT /_fgrl/api/script) or xblcall mock
// --script FILE.
type Script struct {
	Rules []ScriptRule `json:"rules"`
}

// ScriptRule answers the requests that match it.
type ScriptRule struct {
	// Name names the rule in what the mock saw (Call.Script); "" is
	// "rules[i]".
	Name  string      `json:"name,omitempty"`
	Match ScriptMatch `json:"match"`
	// Answers are played in sequence, one a matching request.
	Answers []ScriptAnswer `json:"answers"`
	// Then is what answers once the sequence is played: "repeat" (the
	// last answer again; the default) or "mock" (the mock's own
	// behaviour, as if the rule were not there).
	Then string `json:"then,omitempty"`
	// Count counts the scripted answers against FGRL as the service's own
	// would be (a request past a limit is refused with 429 before the
	// script answers); by default they are not counted.
	Count bool `json:"count,omitempty"`
}

// ScriptMatch says which requests a rule answers; an empty field matches
// anything. Method and host ignore case; the path is matched as sent,
// exactly, by prefix, or by a pattern in the syntax of the mock's routes
// ("/users/{user}/profile/settings": {} any segment, {user} me or
// xuid(N), xuid({n}), gt({})), ignoring case.
type ScriptMatch struct {
	Method      string `json:"method,omitempty"`
	Host        string `json:"host,omitempty"`
	Path        string `json:"path,omitempty"`
	PathPrefix  string `json:"pathPrefix,omitempty"`
	PathPattern string `json:"pathPattern,omitempty"`
	// Query names query parameters the request must carry, with these
	// values.
	Query map[string]string `json:"query,omitempty"`
	// BodyContains is text the request's body must hold.
	BodyContains string `json:"bodyContains,omitempty"`
}

// ScriptAnswer is one scripted answer: a status with headers and a body,
// after a latency, or a network fault.
type ScriptAnswer struct {
	// Status is the answer's status: 200 to 599, 200 when 0.
	Status int `json:"status,omitempty"`
	// Headers are set on the answer, each value without the blanks around
	// it (as a client reads it). The server's own are refused:
	// Content-Length, Transfer-Encoding, Trailer, Connection, Keep-Alive,
	// Proxy-Connection, TE and Upgrade.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is the answer's body: a JSON object, array, number or literal
	// is sent as JSON (Content-Type application/json), a JSON string as
	// its text. BodyFile names a file to send instead, relative to the
	// script's file and within its directory (LoadScript only).
	Body     json.RawMessage `json:"body,omitempty"`
	BodyFile string          `json:"bodyFile,omitempty"`
	// Latency delays the answer ("250ms", "2s").
	Latency throttle.Duration `json:"latency,omitempty"`
	// Fault answers with a network fault instead: "reset" (the connection
	// closes without an answer), "hang" (no answer until the client gives
	// up) or "truncate" (the body cut short and the connection closed).
	Fault string `json:"fault,omitempty"`
}

// Bounds of a script.
const (
	// MaxScriptBytes bounds a script file, and the body files it names
	// together.
	MaxScriptBytes   = 16 << 20
	maxScriptRules   = 1000
	maxScriptAnswers = 1000   // a rule's
	maxAnswersInAll  = 10_000 // all the rules' together
	maxScriptLatency = 10 * time.Minute
)

// scriptState is a set script with where each rule's sequence is.
type scriptState struct {
	script   Script
	patterns []pattern // by rule, nil where the rule has none
	bodies   bool      // a rule matches on bodies: requests' bodies are read
	mu       sync.Mutex
	played   []int // answers played, by rule
}

func newScriptState(s Script) *scriptState {
	st := &scriptState{script: s, patterns: make([]pattern, len(s.Rules)), played: make([]int, len(s.Rules))}
	for i, r := range s.Rules {
		if r.Match.PathPattern != "" {
			st.patterns[i] = pat(r.Match.PathPattern)
		}
		st.bodies = st.bodies || r.Match.BodyContains != ""
	}
	return st
}

// SetScript replaces the script (a zero Script removes it); every rule's
// sequence starts again. A script that cannot be is refused with a
// *datafile.Error, changing nothing.
func (h *Handler) SetScript(s Script) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.noBodyFile("a body file is read by LoadScript"); err != nil {
		return err
	}
	if len(s.Rules) == 0 {
		h.script.Store(nil)
		return nil
	}
	h.script.Store(newScriptState(s))
	return nil
}

// Script returns the script set (with no rules when none is).
func (h *Handler) Script() Script {
	if st := h.script.Load(); st != nil {
		return st.script
	}
	return Script{Rules: []ScriptRule{}}
}

// find returns the first rule that matches r, whose body (as far as the
// mock reads bodies) is body, and whether it answers: false once a "mock"
// rule's sequence is played; -1 when none matches.
func (st *scriptState) find(r *http.Request, body []byte) (int, bool) {
	for i, rl := range st.script.Rules {
		if st.matches(i, r, body) {
			st.mu.Lock()
			done := st.played[i] >= len(rl.Answers) && rl.Then == "mock"
			st.mu.Unlock()
			return i, !done
		}
	}
	return -1, false
}

// next returns rule i's next answer and moves its sequence on.
func (st *scriptState) next(i int) *ScriptAnswer {
	st.mu.Lock()
	defer st.mu.Unlock()
	as := st.script.Rules[i].Answers
	n := st.played[i]
	st.played[i]++
	return &as[min(n, len(as)-1)]
}

// scripted is the script's stage: it answers c from the script when a
// rule matches it, and reports whether it did. A counted rule's request is
// counted first (count), when its token is one the services take, and
// refused with 429 at a limit (its sequence does not move on).
func (h *Handler) scripted(st *scriptState, x *exchange) bool {
	r := x.r
	var body []byte
	if st.bodies && r.Body != nil {
		// The service reads the body whole after the script's look at
		// its first MaxBody bytes: a body over the bound is still one
		// (call.decode).
		body, _ = peekBody(r, h.cfg.maxBody)
	}
	i, answers := st.find(r, body)
	if !answers {
		return false
	}
	rule, known := h.cfg.limits.Match(r.Method, r.Host, r.URL.Path)
	// A token the services would refuse (not minted, or past its
	// NotAfter) names no caller: the answer is neither counted nor
	// recorded as theirs.
	id, err := h.tokens.caller(r.Header.Get("Authorization"), r.Host, h.cfg.now)
	x.script = st.ruleName(i)
	if known {
		x.scope = rule.Scope()
	}
	if err == nil {
		x.id = id
	}
	if st.script.Rules[i].Count && known && err == nil && !h.count(x, rule) {
		return true
	}
	st.next(i).answer(x.w, r)
	return true
}

func (st *scriptState) matches(i int, r *http.Request, body []byte) bool {
	m := st.script.Rules[i].Match
	switch {
	case m.Method != "" && !strings.EqualFold(m.Method, r.Method),
		m.Host != "" && !strings.EqualFold(m.Host, hostOnly(r.Host)),
		m.Path != "" && r.URL.Path != m.Path,
		m.PathPrefix != "" && !strings.HasPrefix(r.URL.Path, m.PathPrefix),
		m.BodyContains != "" && !bytes.Contains(body, []byte(m.BodyContains)):
		return false
	}
	if p := st.patterns[i]; p != nil {
		var buf [maxParams]string
		if _, ok := p.match(r.URL.Path, buf[:0]); !ok {
			return false
		}
	}
	if len(m.Query) > 0 {
		q := r.URL.Query()
		for k, v := range m.Query {
			if !q.Has(k) || q.Get(k) != v {
				return false
			}
		}
	}
	return true
}

// ruleName is how a rule is named in what the mock saw.
func (st *scriptState) ruleName(i int) string {
	if n := st.script.Rules[i].Name; n != "" {
		return n
	}
	return "rules[" + strconv.Itoa(i) + "]"
}

// answer plays a scripted answer.
func (a *ScriptAnswer) answer(w http.ResponseWriter, r *http.Request) {
	if a.Latency > 0 || a.Fault == "hang" {
		wait := time.Duration(a.Latency)
		if a.Fault == "hang" {
			wait = maxScriptLatency
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		if a.Fault == "hang" {
			panic(http.ErrAbortHandler)
		}
	}
	if a.Fault == "reset" {
		panic(http.ErrAbortHandler)
	}
	body, isJSON := a.body()
	for k, v := range a.Headers {
		w.Header().Set(k, textproto.TrimString(v)) // as a client reads it: the blanks around a value are not its
	}
	if isJSON && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	if a.Fault == "truncate" {
		tw := &truncWriter{ResponseWriter: w, code: status}
		tw.Write(body)
		tw.cut()
		return
	}
	w.WriteHeader(status)
	w.Write(body)
}

// body returns the answer's body and whether it is JSON.
func (a *ScriptAnswer) body() ([]byte, bool) {
	if len(a.Body) == 0 {
		return nil, false
	}
	var s string
	if a.Body[0] == '"' && json.Unmarshal(a.Body, &s) == nil {
		return []byte(s), false
	}
	return a.Body, true
}
