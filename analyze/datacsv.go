package analyze

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A data file's CSV is read streaming, a row at a time, each field cut to
// maxField bytes: encoding/csv holds a whole record, and with LazyQuotes
// (which the logger's unescaped fields need) a quote never closed makes
// the rest of the file one field. The logger (XSAPI's
// service_call_logger_data::to_string) writes each row on one line: it
// writes every field quoted, the headers' and bodies' quotes doubled and
// their line breaks as spaces (utils::escape_special_characters), and the
// host, URI and user as they are. A row holding a line break in a quoted
// field is so rows a quote left open joined, whether the joined row has
// more fields than the header or (a quote opened and closed in the same
// field of two rows) as many: never a call.
const (
	// maxField is enough for a body's MaxBody bytes however quoted (""
	// is 2 bytes for 1).
	maxField = 2 * MaxBody
	// maxFields is how many fields of a row are kept (the logger's first
	// 18, up to EventName); the others are counted.
	maxFields = 18
)

func readDataCSV(r *bufio.Reader, add func(*Call)) (Input, error) {
	in := Input{}
	rows := &csvRows{r: r}
	if !rows.next() { // the version line
		return in, fmt.Errorf("%w: CSV: no version line", ErrNotTrace)
	}
	if rows.spans || rows.cut {
		return in, fmt.Errorf("%w: CSV: the version line opens a quote it does not close on its line", ErrNotTrace)
	}
	if !rows.next() {
		return in, fmt.Errorf("%w: CSV: no header line", ErrNotTrace)
	}
	switch {
	case rows.spans || rows.cut:
		in.stop(0, rows.start, "the header line opens a quote it does not close on its line: it would swallow the rows after it")
		return in, nil
	case !rows.eol:
		in.stop(0, rows.start, "the file ends inside the header line")
		return in, nil
	case rows.n < 12:
		in.stop(0, rows.start, "the header line names %d columns, fewer than the 12 a call's row needs", rows.n)
		return in, nil
	}
	header := rows.n
	var c Call
	i := 0
	for ; rows.next(); i++ {
		if rows.cut || !rows.eol && rows.n < header {
			in.stop(i, rows.start, "the file ends inside row %d", i)
			return in, nil
		}
		if i == MaxCalls {
			in.stop(i, rows.start, "stopped after %d rows, the most one trace may hold", MaxCalls)
			return in, nil
		}
		if rows.spans {
			in.problem(i, rows.start, "a quote left open joins rows: a line break in a quoted field, which the logger never writes")
			continue
		}
		if bad := rows.shape(header); bad != "" {
			in.problem(i, rows.start, "%s", bad)
			continue
		}
		f := &rows.fields
		d := dataCall{Host: string(f[0]), Uri: string(f[1]), XboxUserId: string(f[2]), RequestHeaders: string(f[4]), RequestBody: string(f[5]),
			ResponseHeaders: string(f[6]), ResponseBody: string(f[7]), HttpStatusCode: string(f[8]), ElapsedCallTimeMs: string(f[9]),
			IsGet: truthy(string(f[11]))}
		d.ReqTime, _ = parseLoggedTime(string(f[10]))
		if rows.n > 13 {
			d.IsShoulderTap = truthy(string(f[13]))
		}
		if rows.n > 17 {
			d.IsInGameEvent, d.EventName = truthy(string(f[16])), string(f[17])
		}
		bad, moved := d.call(&c, i)
		if bad != "" {
			in.problem(i, rows.start, "%s", bad)
			continue
		}
		if moved {
			in.problem(i, rows.start, "%s", otherHost)
		}
		c.Offset = rows.start
		in.Calls++
		add(&c)
	}
	if rows.err != nil && !errors.Is(rows.err, errCapped) { // ReadData says where a capped trace stopped
		in.stop(i, rows.off, "reading stopped inside row %d: %v", i, rows.err)
	}
	return in, nil
}

// shape says why a row is no call by its count of fields: fewer than 12,
// or more than the header's (a quote left open joins rows).
func (s *csvRows) shape(header int) string {
	switch {
	case s.n < 12:
		return fmt.Sprintf("%d fields, want at least 12", s.n)
	case s.n > header:
		return fmt.Sprintf("%d fields, more than the header's %d", s.n, header)
	}
	return ""
}

// csvRows reads the rows of a CSV text as encoding/csv reads them with
// LazyQuotes: fields separated by commas, rows by \n or \r\n, empty lines
// skipped, a quoted field's "" a quote, a quote that neither ends a field
// nor is doubled kept as it is.
type csvRows struct {
	r      *bufio.Reader
	off    int64 // bytes read
	start  int64 // where the row read last starts
	fields [maxFields][]byte
	n      int   // fields of the row read last
	eol    bool  // it ended with a line end
	cut    bool  // the text ended inside a quoted field
	spans  bool  // a quoted field of it holds a line end: it spans lines
	err    error // a read error other than io.EOF
}

// States of csvRows.next.
const (
	csvRowStart = iota // before a row
	csvRowCR           // a \r before a row
	csvField           // after a comma
	csvBare            // in an unquoted field
	csvBareCR          // a \r in an unquoted field
	csvQuoted          // in a quoted field
	csvQuotedCR        // a \r in a quoted field
	csvQuote           // a quote in a quoted field
	csvQuoteCR         // a quote, then \r
)

// next reads the next row into s.fields and s.n; false at the end of the
// text, or at a read error (s.err: the partial row is not given).
func (s *csvRows) next() bool {
	s.n, s.cut, s.eol, s.spans = 0, false, true, false
	s.fields[0] = s.fields[0][:0]
	state := csvRowStart
	for {
		if (state == csvQuoted || state == csvBare) && s.plain(state == csvQuoted) {
			continue
		}
		b, err := s.r.ReadByte()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
				return false
			}
			switch state {
			case csvRowStart, csvRowCR:
				return false
			case csvQuoted, csvQuotedCR:
				s.cut = true
			}
			s.endField()
			s.eol = false
			return true
		}
		s.off++
	again:
		switch state {
		case csvRowStart:
			switch b {
			case '\n': // an empty line
			case '\r':
				state = csvRowCR
			default:
				s.start, state = s.off-1, csvField
				goto again
			}
		case csvRowCR:
			if b == '\n' {
				state = csvRowStart
				continue
			}
			s.start, state = s.off-2, csvBare
			s.add('\r')
			goto again
		case csvField:
			if b == '"' {
				state = csvQuoted
				continue
			}
			state = csvBare
			goto again
		case csvBare:
			switch b {
			case ',':
				s.endField()
				state = csvField
			case '\n':
				s.endField()
				return true
			case '\r':
				state = csvBareCR
			default:
				s.add(b)
			}
		case csvBareCR:
			if b == '\n' {
				s.endField()
				return true
			}
			s.add('\r')
			state = csvBare
			goto again
		case csvQuoted:
			switch b {
			case '"':
				state = csvQuote
			case '\r':
				state = csvQuotedCR
			case '\n':
				s.add(b)
				s.spans = true
			default:
				s.add(b)
			}
		case csvQuotedCR:
			if b == '\n' { // \r\n in a field reads as \n, as encoding/csv reads it
				s.add('\n')
				s.spans = true
				state = csvQuoted
				continue
			}
			s.add('\r')
			state = csvQuoted
			goto again
		case csvQuote:
			switch b {
			case '"':
				s.add('"')
				state = csvQuoted
			case ',':
				s.endField()
				state = csvField
			case '\n':
				s.endField()
				return true
			case '\r':
				state = csvQuoteCR
			default: // a lazy quote: kept
				s.add('"')
				state = csvQuoted
				goto again
			}
		case csvQuoteCR:
			if b == '\n' {
				s.endField()
				return true
			}
			s.add('"')
			s.add('\r')
			state = csvQuoted
			goto again
		}
	}
}

// plain reads the run of buffered bytes that go into the field being read
// as they are (none that ends a field, a row or a quoted run), and reports
// whether there was one.
func (s *csvRows) plain(quoted bool) bool {
	buf, _ := s.r.Peek(s.r.Buffered())
	k := 0
	for ; k < len(buf); k++ {
		if c := buf[k]; c == '"' || c == '\r' || !quoted && (c == ',' || c == '\n') {
			break
		}
	}
	if k == 0 {
		return false
	}
	if quoted && bytes.IndexByte(buf[:k], '\n') >= 0 {
		s.spans = true
	}
	if s.n < maxFields {
		f := s.fields[s.n]
		s.fields[s.n] = append(f, buf[:min(k, maxField-len(f))]...)
	}
	s.r.Discard(k)
	s.off += int64(k)
	return true
}

// add appends b to the field being read, within maxField and maxFields.
func (s *csvRows) add(b byte) {
	if s.n < maxFields && len(s.fields[s.n]) < maxField {
		s.fields[s.n] = append(s.fields[s.n], b)
	}
}

// endField ends the field being read and starts the next.
func (s *csvRows) endField() {
	if s.n++; s.n < maxFields {
		s.fields[s.n] = s.fields[s.n][:0]
	}
}

// headerValue finds a header in the logger's header text ("Name: value"
// pairs, separated by two spaces or line breaks): its first value, and how
// many times the text names it.
func headerValue(text, name string) (value string, n int) {
	for _, part := range strings.FieldsFunc(strings.ReplaceAll(text, "  ", "\n"), func(r rune) bool { return r == '\n' || r == '\r' }) {
		k, v, ok := strings.Cut(part, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			if n++; n == 1 {
				value = strings.TrimSpace(v)
			}
		}
	}
	return value, n
}
