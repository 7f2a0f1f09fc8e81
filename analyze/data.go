package analyze

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/xblgo/fgrl/internal/xblauth"
)

// ReadData reads the trace analyzer's own data files (its -data input), as
// the console's service call logger writes them: CSV (a version line,
// "v1509" or "v1510", a header line, then a row per call: Host, Uri,
// XboxUserId, MultiplayerCorrelationId, RequestHeaders, RequestBody,
// ResponseHeaders, ResponseBody, HttpStatusCode, ElapsedCallTimeMs,
// ReqTimeUTC, IsGet, ...) or JSON (an array of endpoints, each an object
// whose first member names the endpoint and whose other members are its
// calls, objects of the same fields or arrays of them, ReqTimeUTC the bits
// of a Windows file time). Each call is passed to add as a Call: the
// method is GET when IsGet says so and POST otherwise (the logs record no
// other); the user is the call's XboxUserId (the logs keep no token: an
// Authorization naming it stands in); a recorded in-game event
// (IsInGameEvent) is passed with its InGameEvent name. Bounds and problems
// as ReadHAR's.
func ReadData(r io.Reader, add func(*Call)) (Input, error) {
	br := bufio.NewReaderSize(&cappedReader{r: r, left: maxTraceBytes}, 256<<10)
	head, _ := br.Peek(8)
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	switch {
	case bytes.HasPrefix(head, []byte("v1509")), bytes.HasPrefix(head, []byte("v1510")):
		return readDataCSV(br, add)
	case len(head) > 0 && head[0] == '[':
		return readDataJSON(br, add)
	}
	return Input{}, fmt.Errorf("%w: not a trace analyzer data file (a v1509 or v1510 CSV, or a JSON array of endpoints)", ErrNotTrace)
}

// dataCall is one call of a data file, by the logger's field names.
type dataCall struct {
	Host, Uri, XboxUserId, RequestHeaders, RequestBody, ResponseHeaders, ResponseBody, EventName string
	HttpStatusCode, ElapsedCallTimeMs                                                            string
	ReqTime                                                                                      time.Time
	IsGet, IsInGameEvent                                                                         bool
}

// call fills c from d; a reason when d is no call.
func (d *dataCall) call(c *Call, i int) string {
	*c = Call{Index: i, Time: d.ReqTime}
	switch {
	case d.ReqTime.IsZero():
		return "no ReqTimeUTC"
	case d.Uri == "" && !d.IsInGameEvent:
		return "no Uri"
	}
	c.URL, c.Method = d.Uri, "POST"
	if d.IsGet {
		c.Method = "GET"
	}
	if !strings.Contains(c.URL, "://") && d.Host != "" {
		c.URL = "https://" + d.Host + "/" + strings.TrimPrefix(c.URL, "/")
	}
	if d.IsInGameEvent {
		c.InGameEvent = cmp.Or(d.EventName, "event")
		if c.URL == "" {
			c.URL = "https://inGameEvents/"
		}
	}
	if a := headerValue(d.RequestHeaders, "Authorization"); a != "" {
		c.Authorization = xblauth.Redact(a)
	} else if d.XboxUserId != "" && len(d.XboxUserId) <= 64 {
		c.Authorization = "XBL3.0 x=" + d.XboxUserId + ";REDACTED" // the user, named by XUID
	}
	c.UserAgent = clipUserAgent(headerValue(d.RequestHeaders, "User-Agent"))
	c.RetryAfter = headerValue(d.ResponseHeaders, "Retry-After")
	c.Status, _ = strconv.Atoi(strings.TrimSpace(d.HttpStatusCode))
	if ms, err := strconv.ParseFloat(strings.TrimSpace(d.ElapsedCallTimeMs), 64); err == nil && ms >= 0 && ms < 1e9 {
		c.Duration = time.Duration(ms * float64(time.Millisecond))
	}
	c.RequestBody, c.ResponseBody = clipBody([]byte(d.RequestBody)), clipBody([]byte(d.ResponseBody))
	return ""
}

// headerValue finds a header in the logger's header text ("Name: value"
// pairs, separated by two spaces or line breaks).
func headerValue(text, name string) string {
	for _, part := range strings.FieldsFunc(strings.ReplaceAll(text, "  ", "\n"), func(r rune) bool { return r == '\n' || r == '\r' }) {
		k, v, ok := strings.Cut(part, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func readDataCSV(r *bufio.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	if _, err := r.ReadString('\n'); err != nil { // the version line
		return in, fmt.Errorf("%w: CSV: %v", ErrNotTrace, err)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord, cr.LazyQuotes, cr.ReuseRecord = -1, true, true
	if _, err := cr.Read(); err != nil { // the header line
		return in, fmt.Errorf("%w: CSV: no header line: %v", ErrNotTrace, err)
	}
	var c Call
	for i := 0; ; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return in, nil
		}
		if err != nil {
			in.Truncated = "stopped at a malformed row: " + shortErr(err)
			return in, nil
		}
		if in.Calls+in.ProblemCount >= MaxCalls {
			in.Truncated = fmt.Sprintf("stopped after %d rows, the most one trace may hold", MaxCalls)
			return in, nil
		}
		if len(rec) < 12 {
			in.problem(i, "%d fields, want at least 12", len(rec))
			continue
		}
		d := dataCall{Host: rec[0], Uri: rec[1], XboxUserId: rec[2], RequestHeaders: rec[4], RequestBody: rec[5], ResponseHeaders: rec[6],
			ResponseBody: rec[7], HttpStatusCode: rec[8], ElapsedCallTimeMs: rec[9], IsGet: strings.EqualFold(rec[11], "true")}
		d.ReqTime, _ = parseLoggedTime(rec[10])
		if len(rec) > 17 {
			d.IsInGameEvent, d.EventName = strings.EqualFold(rec[16], "true"), rec[17]
		}
		if bad := d.call(&c, i); bad != "" {
			in.problem(i, "%s", bad)
			continue
		}
		in.Calls++
		add(&c)
	}
}

// parseLoggedTime reads a time as the console's loggers write it (a data
// file's ReqTimeUTC, an in-game event's time): ISO 8601, with or without a
// zone, or .NET's invariant form.
func parseLoggedTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05.9999999", "1/2/2006 3:04:05 PM"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// fileTimeEpoch is the Unix epoch as a Windows file time (100 ns units
// since 1601).
const fileTimeEpoch = 116444736000000000

// jsonDataTime reads a JSON ReqTimeUTC: the logger writes a file time's
// 64 bits as a double's.
func jsonDataTime(v json.Number) (time.Time, bool) {
	f, err := v.Float64()
	if err != nil {
		return time.Time{}, false
	}
	ft := int64(math.Float64bits(f))
	if ft <= fileTimeEpoch || ft > fileTimeEpoch+200*365*24*3600*10_000_000 { // 1970 to 2170: in range of time.Unix
		return time.Time{}, false
	}
	return time.Unix(0, (ft-fileTimeEpoch)*100).UTC(), true
}

// jsonCall is a call of a JSON data file.
type jsonCall struct {
	Host, Uri, XboxUserId, RequestHeaders, RequestBody, ResponseHeaders, ResponseBody, EventName string
	HttpStatusCode, ElapsedCallTimeMs, ReqTimeUTC                                                json.Number
	IsGet, IsInGameEvent                                                                         any
}

func readDataJSON(r *bufio.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return in, fmt.Errorf("%w: JSON: want an array of endpoints", ErrNotTrace)
	}
	var c Call
	i := 0
	for dec.More() {
		var endpoint []json.RawMessage // the members' values, in order
		if err := decodeMembers(dec, &endpoint); err != nil {
			in.Truncated = "stopped at a malformed endpoint: " + shortErr(err)
			return in, nil
		}
		if len(endpoint) == 0 {
			continue
		}
		var host string
		json.Unmarshal(endpoint[0], &host)
		for _, raw := range endpoint[1:] {
			calls := []json.RawMessage{raw}
			if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
				calls = nil
				json.Unmarshal(raw, &calls)
			}
			for _, one := range calls {
				if in.Calls+in.ProblemCount >= MaxCalls {
					in.Truncated = fmt.Sprintf("stopped after %d calls, the most one trace may hold", MaxCalls)
					return in, nil
				}
				var j jsonCall
				d := json.NewDecoder(bytes.NewReader(one))
				d.UseNumber()
				if err := d.Decode(&j); err != nil {
					in.problem(i, "not a call: %s", shortErr(err))
					i++
					continue
				}
				dc := dataCall{Host: cmp.Or(j.Host, host), Uri: j.Uri, XboxUserId: j.XboxUserId, RequestHeaders: j.RequestHeaders,
					RequestBody: j.RequestBody, ResponseHeaders: j.ResponseHeaders, ResponseBody: j.ResponseBody, EventName: j.EventName,
					HttpStatusCode: j.HttpStatusCode.String(), ElapsedCallTimeMs: j.ElapsedCallTimeMs.String(),
					IsGet: truthy(j.IsGet), IsInGameEvent: truthy(j.IsInGameEvent)}
				dc.ReqTime, _ = jsonDataTime(j.ReqTimeUTC)
				if bad := dc.call(&c, i); bad != "" {
					in.problem(i, "%s", bad)
				} else {
					in.Calls++
					add(&c)
				}
				i++
			}
		}
	}
	return in, nil
}

// decodeMembers reads one JSON object's member values, in order.
func decodeMembers(dec *json.Decoder, out *[]json.RawMessage) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if err == nil {
			err = errors.New("an endpoint is not an object")
		}
		return err
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the member's name
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*out = append(*out, v)
	}
	_, err := dec.Token()
	return err
}

// truthy reads the logger's booleans: true, or "true" in any case.
func truthy(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return strings.EqualFold(b, "true")
	}
	return false
}
