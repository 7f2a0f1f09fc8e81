package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/safetext"
	"github.com/xblgo/fgrl/internal/xblid"
	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/throttle"
)

// maxBody bounds the bodies of the admin API's faults and checks.
const maxBody = 64 << 10

// readyBody is GET /_fgrl/api/ready's answer, the same from every mock:
// it says the mock serves, and nothing about it.
const readyBody = `{"ready":true}`

// ready answers that the mock serves: a request reaches it only once the
// mock's listener accepts and its handler is built.
func (a *admin) ready(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	io.WriteString(w, readyBody)
}

// reset puts the mock back as seeded in one call (mock.Handler.Reset).
func (a *admin) reset(w http.ResponseWriter, r *http.Request) {
	switch err := a.h.Reset(r.Context()); {
	case errors.Is(err, mock.ErrCannotReset):
		writeJSON(w, http.StatusNotImplemented, apiError{"the counts' store cannot forget keys; the rest was reset"})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, apiError{"reset of the counts failed (the rest was reset): " + safetext.Clip(err.Error(), 200)})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// keys answers the keys counted lately, or the one the query names.
func (a *admin) keys(w http.ResponseWriter, r *http.Request) {
	if !namesKey(r) {
		writeJSON(w, http.StatusOK, a.h.Overview(r.Context()).Keys)
		return
	}
	k, err := keyOf(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	d, err := a.h.Counts(k)
	if err != nil {
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, mock.KeyCounts{User: k.User, Title: k.Title, Scope: k.Scope, Counts: d.Counts})
}

// resetKeys forgets the counts of the key the query names, or of every key.
func (a *admin) resetKeys(w http.ResponseWriter, r *http.Request) {
	var k *throttle.Key
	if namesKey(r) {
		key, err := keyOf(r)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
			return
		}
		k = &key
	}
	switch err := a.h.ResetCounts(r.Context(), k); {
	case errors.Is(err, mock.ErrCannotReset):
		writeJSON(w, http.StatusNotImplemented, apiError{"the counts' store cannot forget keys"})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, apiError{"reset failed: " + safetext.Clip(err.Error(), 200)})
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// namesKey reports whether the query names a key (else it means all).
func namesKey(r *http.Request) bool {
	q := r.URL.Query()
	return q.Has("user") || q.Has("xuid") || q.Has("title") || q.Has("scope")
}

// keyOf reads a key from the query: user (a userhash) or xuid, title and
// scope.
func keyOf(r *http.Request) (throttle.Key, error) {
	q := r.URL.Query()
	k := throttle.Key{User: q.Get("user"), Title: q.Get("title"), Scope: q.Get("scope")}
	if x := q.Get("xuid"); x != "" {
		if k.User != "" {
			return k, errors.New("give user (a userhash) or xuid, not both")
		}
		if err := xblid.CheckXUID(x); err != nil {
			return k, fmt.Errorf("xuid: %w", err)
		}
		k.User = mock.UserHash(x)
	}
	if k.User == "" || k.Title == "" || k.Scope == "" {
		return k, errors.New("a key needs user (or xuid), title and scope")
	}
	return k, nil
}

func (a *admin) faults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.h.Faults())
}

// setFaults changes the faults by the fields the body names; the others
// keep their values (a list, services, is replaced whole when named).
func (a *admin) setFaults(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r, "faults")
	if !ok {
		return
	}
	var named map[string]json.RawMessage
	err := json.Unmarshal(body, &named)
	f := a.h.Faults()
	old := f.Services
	f.Services = nil
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&f)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{"faults: " + decodeReason(err)})
		return
	}
	// encoding/json takes a key in any case: so does naming the list.
	if !slices.ContainsFunc(slices.Collect(maps.Keys(named)), func(k string) bool { return strings.EqualFold(k, "services") }) {
		f.Services = old
	}
	if err := a.h.SetFaults(f); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, a.h.Faults())
}

func (a *admin) endFaults(w http.ResponseWriter, _ *http.Request) {
	a.h.SetFaults(mock.Faults{}) // no faults always check
	w.WriteHeader(http.StatusNoContent)
}

func (a *admin) world(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.h.World())
}

// setWorld seeds the world from the request's body, a world file; a
// malformed one is refused with 400 naming the line and field, the world
// unchanged.
func (a *admin) setWorld(w http.ResponseWriter, r *http.Request) {
	world, err := mock.ReadWorld(r.Body)
	if err == nil {
		err = a.h.SetWorld(world)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, a.h.World())
}

func (a *admin) defaultWorld(w http.ResponseWriter, _ *http.Request) {
	a.h.SetWorld(mock.World{}) // the default world always checks
	w.WriteHeader(http.StatusNoContent)
}

func (a *admin) resetWorld(w http.ResponseWriter, _ *http.Request) {
	a.h.ResetWorld()
	w.WriteHeader(http.StatusNoContent)
}

func (a *admin) script(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, a.h.Script())
}

// setScript sets the script in the request's body (JSON or YAML); a
// script that cannot be is refused with 400 naming the line and field, the
// script unchanged.
func (a *admin) setScript(w http.ResponseWriter, r *http.Request) {
	s, err := mock.ReadScript(r.Body)
	if err == nil {
		err = a.h.SetScript(s)
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, a.h.Script())
}

func (a *admin) endScript(w http.ResponseWriter, _ *http.Request) {
	a.h.SetScript(mock.Script{}) // no script always checks
	w.WriteHeader(http.StatusNoContent)
}

// maxExports bounds the exports of the calls (/_fgrl/api/calls and
// calls.har) served at once: each holds its own copy of the calls it lists
// (up to the journal's 32 MiB, and 10,000 URLs of up to 1 KiB) until its
// client has read it all, so slow clients could otherwise hold that many
// times over.
const maxExports = 4

// exportCalls serves the calls a request's query picks, as JSON or HAR;
// beyond maxExports at once, 503.
func (a *admin) exportCalls(w http.ResponseWriter, r *http.Request, har bool) {
	f, err := callsQuery(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
		return
	}
	if a.exports.Add(1) > maxExports {
		a.exports.Add(-1)
		writeJSON(w, http.StatusServiceUnavailable, apiError{fmt.Sprintf("%d exports of the calls are being read already; retry once one ends", maxExports)})
		return
	}
	defer a.exports.Add(-1)
	if !har {
		writeJSON(w, http.StatusOK, a.h.Calls(f))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="fgrl-mock-calls.har"`)
	a.h.WriteHAR(w, f)
}

// callsQuery reads a CallFilter from an admin request's query.
func callsQuery(r *http.Request) (mock.CallFilter, error) {
	q := r.URL.Query()
	f := mock.CallFilter{Method: q.Get("method"), Host: q.Get("host"), PathPrefix: q.Get("path"), Scope: q.Get("scope"),
		XUID: q.Get("xuid"), Script: q.Get("script")}
	if s := q.Get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 599 {
			return f, badQuery("status", s)
		}
		f.Status = n
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return f, badQuery("since", s)
		}
		f.Since = t
	}
	return f, nil
}

func badQuery(name, value string) error {
	return fmt.Errorf("calls: %s %s is not one (status: 100 to 599; since: an RFC 3339 time)", name, safetext.Quote(value, 40))
}

func (a *admin) forgetCalls(w http.ResponseWriter, _ *http.Request) {
	a.h.ForgetCalls()
	w.WriteHeader(http.StatusNoContent)
}

// readBody reads r's body, at most maxBody bytes, and answers the
// refusal (400, or 413 past the bound: what follows it, unread, would be
// neither applied nor checked) and reports false when it cannot. what
// names the endpoint in the refusal.
func readBody(w http.ResponseWriter, r *http.Request, what string) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		writeJSON(w, http.StatusBadRequest, apiError{what + ": the body could not be read"})
		return nil, false
	case len(body) > maxBody:
		writeJSON(w, http.StatusRequestEntityTooLarge, apiError{fmt.Sprintf("%s: the body is larger than %d bytes", what, maxBody)})
		return nil, false
	}
	return body, true
}

// check runs Check with the options in the body: 200 when it passes, 422
// with the failures when it does not (so curl --fail fails).
func (a *admin) check(w http.ResponseWriter, r *http.Request) {
	var o mock.CheckOptions
	body, ok := readBody(w, r, "check")
	if !ok {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil && err != io.EOF {
		writeJSON(w, http.StatusBadRequest, apiError{"check: " + decodeReason(err)})
		return
	}
	if _, err := dec.Token(); err != io.EOF { // what follows, unread, would not be checked
		writeJSON(w, http.StatusBadRequest, apiError{"check: the body holds more than one JSON object"})
		return
	}
	if !o.No429 && !o.Certify && len(o.Expect) == 0 { // a check of nothing passes nothing
		writeJSON(w, http.StatusBadRequest, apiError{"check: name a check: no429, certify or expect"})
		return
	}
	res, err := a.h.Check(o)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{"check: " + safetext.Clip(err.Error(), 200)})
		return
	}
	status := http.StatusOK
	if !res.OK {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, res)
}
