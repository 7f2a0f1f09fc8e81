package analyze

import (
	"bufio"
	"bytes"
	"cmp"
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
// other); the user is the call's XboxUserId when it is digits, as a XUID
// is written (the logs keep no token: an Authorization naming it stands in;
// a logged Authorization header counts only when there is no such
// XboxUserId, and another XboxUserId names no user); the host is the
// call's Host, in JSON its endpoint's name (a call's own Host is not
// read), as the trace analyzer files calls: a Uri naming no scheme is a
// path at that host, and a call whose absolute Uri names another host is
// judged at the Host and is a problem as well (readers differ on its
// service), but for an in-game event. A call whose logged headers name
// Authorization, User-Agent or Retry-After twice is a problem, as is a 429
// whose Retry-After is not one value, or a call whose URL (its Uri, after
// https:// and its Host when the Uri names no scheme) is not one a HAR
// entry may hold (both as ReadHAR says), or a JSON call holding a field's
// name in another case only under Unicode ("HttpStatuſCode": the trace
// analyzer's Json.NET reads it as the field), naming a field twice (in
// any case) with two values, or without HttpStatusCode (but an in-game
// event or a shoulder tap, which have no answer); a recorded in-game event
// (IsInGameEvent) is passed with its InGameEvent name, a real-time
// activity shoulder tap (IsShoulderTap) as a ShoulderTap. Bounds, problems
// and where reading stops as ReadHAR's; a JSON string is read to its first
// 384 KiB and a CSV field to its first 128 KiB. A call whose
// HttpStatusCode is neither empty, 0 nor an integer from 100 to 999 is no
// call. A CSV row of fewer than 12 fields, more than the header's, or
// holding a line break in a quoted field (the logger writes none: a quote
// left open joins rows) is no call; a header line that spans lines, ends
// without its line end or names fewer than 12 columns stops reading at
// once, and a version line that spans lines is no data file; a file that
// ends inside a row (in a quoted field, or short of the header's fields
// without a line end) stops there. A JSON endpoint whose first member is
// no string (it names the endpoint) is a problem, that member not read;
// anything after the array of endpoints stops reading there.
func ReadData(r io.Reader, add func(*Call)) (Input, error) {
	cr := &cappedReader{r: r, left: maxTraceBytes}
	br := bufio.NewReaderSize(cr, 64<<10)
	head, _ := br.Peek(8)
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	var in Input
	var err error
	switch {
	case bytes.HasPrefix(head, []byte("v1509")), bytes.HasPrefix(head, []byte("v1510")):
		in, err = readDataCSV(br, add)
	case len(head) > 0 && head[0] == '[':
		in, err = readDataJSON(br, add)
	default:
		return Input{}, fmt.Errorf("%w: not a trace analyzer data file (a v1509 or v1510 CSV, or a JSON array of endpoints)", ErrNotTrace)
	}
	if err == nil && cr.over {
		in.stop(in.Calls+in.ProblemCount, cr.read, "%s", overLimit())
	}
	return in, err
}

// dataCall is one call of a data file, by the logger's field names.
type dataCall struct {
	Host, Uri, XboxUserId, RequestHeaders, RequestBody, ResponseHeaders, ResponseBody, EventName string
	HttpStatusCode, ElapsedCallTimeMs                                                            string
	ReqTime                                                                                      time.Time
	IsGet, IsInGameEvent, IsShoulderTap                                                          bool
}

// otherHost is the problem of a data file's call whose Uri names another
// host than its Host (dataCall.call's moved).
const otherHost = "the Uri names another host than the call's Host (a JSON endpoint's name): judged under the Host, as the trace analyzer files it, but readers differ on its service"

// call fills c from d; a reason when d is no call. A call is filed under
// its Host, as the trace analyzer files it: an absolute Uri naming another
// host is judged at the Host (c.URL names it), and moved says so, for the
// reader to make the call a problem as well.
func (d *dataCall) call(c *Call, i int) (bad string, moved bool) {
	*c = Call{Index: i, Time: d.ReqTime}
	switch {
	case d.ReqTime.IsZero():
		return "no ReqTimeUTC", false
	case d.Uri == "" && !d.IsInGameEvent:
		return "no Uri", false
	}
	c.URL, c.Method = d.Uri, "POST"
	if d.IsGet {
		c.Method = "GET"
	}
	if scheme, rest, ok := strings.Cut(c.URL, "://"); ok && !d.IsInGameEvent {
		if _, host, _ := splitURL(c.URL); host != hostName(d.Host) {
			c.URL, moved = scheme+"://"+d.Host+rest[strings.IndexAny(rest+"/", "/?#"):], true
		}
	} else if !ok && d.Host != "" {
		c.URL = "https://" + d.Host + "/" + strings.TrimPrefix(c.URL, "/")
	}
	c.ShoulderTap = d.IsShoulderTap
	if d.IsInGameEvent {
		c.InGameEvent = cmp.Or(d.EventName, "event")
		if c.URL == "" {
			c.URL = "https://inGameEvents/"
		}
	}
	if bad := urlProblem(c.URL); bad != "" {
		return bad, false
	}
	auth, na := headerValue(d.RequestHeaders, "Authorization")
	ua, nu := headerValue(d.RequestHeaders, "User-Agent")
	ra, nr := headerValue(d.ResponseHeaders, "Retry-After")
	for _, h := range []struct {
		name string
		n    int
	}{{"Authorization", na}, {"User-Agent", nu}, {"Retry-After", nr}} {
		if h.n > 1 {
			return fmt.Sprintf("%d %s headers: readers differ on which counts", h.n, h.name), false
		}
	}
	switch u := strings.TrimSpace(d.XboxUserId); {
	case xblauth.UserHash(u): // the user is the XboxUserId, digits as a XUID is written
		c.Authorization = "XBL3.0 x=" + u + ";REDACTED"
	case auth != "":
		c.Authorization = redactAuth(auth)
	case u != "": // not a XUID (a shifted column may put a token there): it names no user
		c.Authorization = xblauth.Redacted
	}
	c.UserAgent, c.RetryAfter = ua, ra
	if st := strings.TrimSpace(d.HttpStatusCode); st != "" {
		var ok bool
		if c.Status, ok = parseStatus(st); !ok {
			return fmt.Sprintf("HttpStatusCode %s is not 0 nor an integer from 100 to 999", shownValue(st)), false
		}
	}
	if bad := retryAfterProblem(c.Status, nr == 1, ra); bad != "" {
		return bad, false
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(d.ElapsedCallTimeMs), 64); err == nil {
		c.Duration = elapsed(ms)
	}
	c.RequestBody, c.ResponseBody = []byte(d.RequestBody), []byte(d.ResponseBody)
	c.cut()
	return "", moved
}

// hostName returns a host a data file names (a Host, an endpoint's name)
// as splitURL reads a URL's: in lower case, without a port.
func hostName(h string) string {
	_, host, _ := splitURL("https://" + h + "/")
	return host
}

// parseLoggedTime reads a time as the console's loggers write it (a data
// file's ReqTimeUTC, an in-game event's time): ISO 8601, with or without a
// zone, or .NET's invariant form.
func parseLoggedTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05.9999999", "1/2/2006 3:04:05 PM"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil && countable(t) {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// The times a call may have: those whose Unix nanoseconds an int64 holds
// (time.Time.UnixNano, which the rules count in), the years 1678 to 2262.
// Past them UnixNano wraps around, and a call would sort among others it
// is centuries away from.
var (
	minCallTime = time.Unix(0, math.MinInt64)
	maxCallTime = time.Unix(0, math.MaxInt64)
)

// countable reports whether t is a time a call may have.
func countable(t time.Time) bool { return !t.Before(minCallTime) && !t.After(maxCallTime) }

// uncountable is the problem of a call whose time is not countable.
func uncountable(field string, t time.Time) string {
	return fmt.Sprintf("%s %s is outside the years 1678 to 2262", field, t.UTC().Format(time.RFC3339))
}

// fileTimeEpoch is the Unix epoch as a Windows file time (100 ns units
// since 1601).
const fileTimeEpoch = 116444736000000000

// jsonDataTime reads a JSON ReqTimeUTC: the logger writes a file time's
// 64 bits as a double's.
func jsonDataTime(v string) (time.Time, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return time.Time{}, false
	}
	ft := int64(math.Float64bits(f))
	if ft <= fileTimeEpoch || ft > fileTimeEpoch+200*365*24*3600*10_000_000 { // 1970 to 2170: in range of time.Unix
		return time.Time{}, false
	}
	return time.Unix(0, (ft-fileTimeEpoch)*100).UTC(), true
}

// truthy reads the logger's booleans: true, or "true" in any case.
func truthy(v string) bool { return strings.EqualFold(v, "true") }
