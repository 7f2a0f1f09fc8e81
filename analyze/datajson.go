package analyze

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/xblgo/fgrl/internal/safetext"
)

// readDataJSON reads a data file's JSON streaming, a call at a time (its
// strings cut as a HAR's are: see maxString).
func readDataJSON(r io.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	dec, cut := jsonDecoder(r)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return in, fmt.Errorf("%w: JSON: want an array of endpoints", ErrNotTrace)
	}
	d := &dataJSON{dec: dec, cut: cut, in: &in, add: add}
	for n := 0; ; n++ {
		switch dec.PeekKind() {
		case ']':
			if _, err := dec.ReadToken(); err != nil {
				d.stop(err)
				return in, nil
			}
			endOfInput(dec, cut, &in, d.i, "the array of endpoints")
			return in, nil
		case '{':
		case 0:
			_, err := dec.ReadToken()
			d.stop(err)
			return in, nil
		default:
			in.stop(d.i, cut.startOffset(dec), "endpoint %d is not an object", n)
			return in, nil
		}
		if err := d.endpoint(); err != nil {
			d.stop(err)
			return in, nil
		}
	}
}

// errMaxCalls ends a data file read at MaxCalls calls.
var errMaxCalls = errors.New("too many calls")

// dataJSON reads the endpoints of a data file's JSON.
type dataJSON struct {
	dec  *jsontext.Decoder
	cut  *jsonCutter
	in   *Input
	add  func(*Call)
	i    int // the next call's index
	host []byte
	f    dataFields
	c    Call
}

// stop records where and why reading stopped, on err.
func (d *dataJSON) stop(err error) {
	if errors.Is(err, errMaxCalls) {
		d.in.stop(d.i, d.cut.startOffset(d.dec), "stopped after %d calls, the most one trace may hold", MaxCalls)
		return
	}
	d.in.stop(d.i, d.cut.errOffset(err), "%s", stopReason(err, d.i, "call"))
}

// endpoint reads one endpoint: an object whose first member names the
// endpoint's host and whose others are its calls, each an object or an
// array of them. A first member that is no string (calls, where the name
// belongs) is a problem, its value not read: which member names the
// endpoint, readers differ.
func (d *dataJSON) endpoint() error {
	dec := d.dec
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for first := true; dec.PeekKind() != '}'; first = false {
		if _, err := dec.ReadToken(); err != nil { // the member's name
			return err
		}
		if first && dec.PeekKind() != '"' {
			d.in.problem(d.i, d.cut.startOffset(dec), "an endpoint's first member is not its name (a string): not read")
			d.host = d.host[:0]
			if err := dec.SkipValue(); err != nil {
				return err
			}
			continue
		}
		if first {
			if err := readString(dec, &d.host); err != nil {
				return err
			}
			continue
		}
		if dec.PeekKind() != '[' {
			if err := d.call(); err != nil {
				return err
			}
			continue
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for dec.PeekKind() != ']' {
			if err := d.call(); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// call reads one call: a call, a problem, or an error that ends the read.
func (d *dataJSON) call() error {
	dec := d.dec
	switch dec.PeekKind() {
	case 0:
		_, err := dec.ReadToken()
		return err
	case '{':
	default:
		d.in.problem(d.i, d.cut.startOffset(dec), "not a call: not an object")
		d.i++
		return dec.SkipValue()
	}
	if d.i == MaxCalls {
		return errMaxCalls
	}
	off := d.cut.startOffset(dec)
	d.cut.forget(dec.InputOffset())
	d.f.reset(dec)
	if err := object(dec, &d.f); err != nil {
		return err // where reading stops: at call d.i
	}
	i := d.i
	d.i++
	if d.f.bad != "" {
		d.in.problem(i, off, "not a call: %s", d.f.bad)
		return nil
	}
	f := &d.f
	event, tap := truthy(string(f.text[jIsInGameEvent])), truthy(string(f.text[jIsShoulderTap]))
	if len(f.text[jHttpStatusCode]) == 0 && !event && !tap { // an event or a tap has no answer
		d.in.problem(i, off, "no HttpStatusCode: the call's answer is unknown")
		return nil
	}
	dc := dataCall{Host: string(d.host), Uri: string(f.text[jUri]), XboxUserId: string(f.text[jXboxUserId]),
		RequestHeaders: string(f.text[jRequestHeaders]), RequestBody: string(f.text[jRequestBody]), ResponseHeaders: string(f.text[jResponseHeaders]),
		ResponseBody: string(f.text[jResponseBody]), EventName: string(f.text[jEventName]),
		HttpStatusCode: string(f.text[jHttpStatusCode]), ElapsedCallTimeMs: string(f.text[jElapsedCallTimeMs]),
		IsGet: truthy(string(f.text[jIsGet])), IsInGameEvent: event, IsShoulderTap: tap}
	dc.ReqTime, _ = jsonDataTime(string(f.text[jReqTimeUTC]))
	bad, moved := dc.call(&d.c, i)
	if bad != "" {
		d.in.problem(i, off, "%s", bad)
		return nil
	}
	if moved {
		d.in.problem(i, off, "%s", otherHost)
	}
	d.c.Offset = off
	d.in.Calls++
	d.add(&d.c)
	return nil
}

// The fields of a JSON call, by the logger's names, which are matched in
// any ASCII case (as the trace analyzer's Json.NET matches them); a name
// in another case only under Unicode (foldedName: "HttpStatuſCode") makes
// the call a problem, since Json.NET reads it as the field, and so does a
// field named twice (in one case or two) with another value: readers
// differ on which counts.
const (
	jUri = iota
	jXboxUserId
	jRequestHeaders
	jRequestBody
	jResponseHeaders
	jResponseBody
	jEventName
	jHttpStatusCode // numbers: a number, or a string holding one
	jElapsedCallTimeMs
	jReqTimeUTC
	jIsGet // booleans: true, or "true" in any case
	jIsInGameEvent
	jIsShoulderTap
	jFields
)

var dataFieldNames = [jFields]string{"uri", "xboxuserid", "requestheaders", "requestbody", "responseheaders", "responsebody",
	"eventname", "httpstatuscode", "elapsedcalltimems", "reqtimeutc", "isget", "isingameevent", "isshouldertap"}

// dataFields reads the fields of one call into text (reused).
type dataFields struct {
	dec  *jsontext.Decoder
	text [jFields][]byte
	seen uint16 // the fields named (bit j for field j)
	prev []byte // the value of a field named again, before it
	bad  string // why the call is no call
}

func (f *dataFields) reset(dec *jsontext.Decoder) {
	f.dec, f.bad, f.seen = dec, "", 0
	for i := range f.text {
		f.text[i] = f.text[i][:0]
	}
}

func (f *dataFields) field(key []byte) error {
	var lower [24]byte
	if len(key) > len(lower) || !safetext.IsASCII(string(key)) {
		f.folded(key)
		return f.dec.SkipValue()
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	j := 0
	for j < jFields && dataFieldNames[j] != string(lower[:len(key)]) {
		j++
	}
	if j == jFields {
		return f.dec.SkipValue()
	}
	again := f.seen&(1<<j) != 0
	if again {
		f.prev = append(f.prev[:0], f.text[j]...)
	}
	f.seen |= 1 << j
	f.text[j] = f.text[j][:0]
	err := f.value(j, key)
	if again && !bytes.Equal(f.prev, f.text[j]) {
		f.bad = fmt.Sprintf("%q names a field again with another value: readers differ on which counts", clip(string(key)))
	}
	return err
}

// value reads the value of field j, named key, into f.text[j].
func (f *dataFields) value(j int, key []byte) error {
	dec := f.dec
	kind := dec.PeekKind()
	switch {
	case kind == 'n': // null: no value
		return dec.SkipValue()
	case j >= jIsGet && kind != '"':
		if kind == 't' {
			f.text[j] = append(f.text[j], "true"...)
		}
		return dec.SkipValue()
	case j >= jHttpStatusCode && j < jIsGet && kind == '0':
		v, err := dec.ReadValue()
		f.text[j] = append(f.text[j], v...)
		return err
	case kind != '"':
		want := "a string"
		if j >= jHttpStatusCode {
			want = "a number"
		}
		f.bad = fmt.Sprintf("%s: want %s", clip(string(key)), want)
		return dec.SkipValue()
	}
	if err := readString(dec, &f.text[j]); err != nil {
		return err
	}
	if v := jsontext.Value(f.text[j]); j >= jHttpStatusCode && j < jIsGet && (!v.IsValid() || v.Kind() != '0') {
		f.bad = fmt.Sprintf("%s: %s is not a number", clip(string(key)), shownValue(string(v)))
	}
	return nil
}

// folded makes the call a problem when key, not one of its fields' names
// in ASCII case, is one under Unicode folding (foldedName, which reads at
// most a name's length of key, so a long key costs no more).
func (f *dataFields) folded(key []byte) {
	for _, n := range dataFieldNames {
		if foldedName(key, n) {
			f.bad = fmt.Sprintf("%q is %q in another case: readers differ on which counts", clip(string(key)), n)
			return
		}
	}
}
