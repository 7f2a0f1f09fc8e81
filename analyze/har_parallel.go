package analyze

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// A HAR file (something that seeks) is read in parallel: one goroutine cuts
// the entries array into chunks of whole entries by its bytes alone (strings
// and nesting), the others decode chunks with their own jsontext decoder,
// and the caller's goroutine adds the calls in trace order. Decoding is most
// of the cost, and it is what spreads over the cores.

const (
	chunkEntries = 512
	chunkBytes   = 1 << 20
)

type harChunk struct {
	seq, first int    // order, and index of its first entry
	data       []byte // "[" entries... "]", without the "]" when the file ends inside
}

type harResult struct {
	seq       int
	calls     []Call
	problems  []Problem
	truncated string // why decoding stopped inside this chunk
}

// readHARParallel reads the entries array starting at r's position (just
// after its "["), first being the index of the first entry.
func readHARParallel(r io.Reader, add func(*Call)) Input {
	chunks := make(chan harChunk, 4)
	results := make(chan harResult, 4)
	var wg sync.WaitGroup
	wg.Go(func() {
		splitEntries(r, chunks)
		close(chunks)
	})
	var workers sync.WaitGroup
	for range max(runtime.GOMAXPROCS(0), 2) {
		workers.Go(func() {
			for c := range chunks {
				res := decodeChunk(c)
				chunkPool.Put(&c.data) // the calls hold copies
				results <- res         // the merger reads every result
			}
		})
	}
	go func() { workers.Wait(); close(results) }()

	in := Input{}
	defer wg.Wait()
	pending := map[int]harResult{}
	next := 0
	for res := range results {
		pending[res.seq] = res
		for {
			res, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if in.Truncated != "" {
				continue // drain: the trace ended earlier
			}
			for i := range res.calls {
				if in.Calls == MaxCalls {
					in.Truncated = fmt.Sprintf("stopped after %d entries", MaxCalls)
					break
				}
				in.Calls++
				add(&res.calls[i])
			}
			for _, p := range res.problems {
				in.problem(p.Index, "%s", p.Reason)
			}
			if res.truncated != "" && in.Truncated == "" {
				in.Truncated = res.truncated
			}
		}
	}
	return in
}

// decodeChunk decodes one chunk's entries, copying what each call keeps
// (the merger caps the calls at MaxCalls).
func decodeChunk(c harChunk) harResult {
	res := harResult{seq: c.seq}
	dec := jsontext.NewDecoder(bytes.NewReader(c.data), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if _, err := dec.ReadToken(); err != nil {
		res.truncated = fmt.Sprintf("entry %d is not valid JSON (%v)", c.first, shortErr(err))
		return res
	}
	res.truncated = decodeEntries(dec, c.first, -1, func(call *Call) {
		cp := *call
		cp.RequestBody, cp.ResponseBody = bytes.Clone(call.RequestBody), bytes.Clone(call.ResponseBody)
		res.calls = append(res.calls, cp)
	}, func(i int, reason string) { res.problems = append(res.problems, Problem{i, reason}) })
	return res
}

// splitEntries cuts the entries array (r is just after its "[") into
// chunks of whole entries, by tracking strings and nesting only; the
// decoders check everything else.
func splitEntries(r io.Reader, out chan<- harChunk) {
	var s splitter
	s.start(0)
	bp := blocks.Get().(*[]byte)
	defer blocks.Put(bp)
	block := *bp
	for {
		n, err := r.Read(block)
		if n > 0 && s.feed(block[:n], out) {
			return // the array ended
		}
		if err != nil {
			s.emit(out, false) // the file ends inside the array
			return
		}
	}
}

var (
	blocks    = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}
	chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkBytes+256<<10); return &b }}
)

// splitter is splitEntries' state between blocks.
type splitter struct {
	depth    int
	inString bool
	// backslashes ends the last block inside a string: a quote after
	// them is escaped when they are odd.
	backslashes int
	seq         int
	entries     int // in the current chunk
	first       int // index of the current chunk's first entry
	buf         []byte
}

func (s *splitter) start(first int) {
	s.first, s.entries = first, 0
	s.buf = append((*chunkPool.Get().(*[]byte))[:0], '[')
}

// structural marks the bytes that matter outside strings.
var structural = func() (t [256]bool) {
	for _, c := range []byte(`"{}[],`) {
		t[c] = true
	}
	return t
}()

// feed scans a block, emitting the chunks it completes; it reports whether
// the array ended. Inside a string it jumps
// from quote to quote (bytes.IndexByte), a quote ending the string unless an
// odd run of backslashes precedes it.
func (s *splitter) feed(b []byte, out chan<- harChunk) bool {
	from, i := 0, 0
	for i < len(b) {
		if s.inString {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				n := trailingBackslashes(b[i:])
				if n == len(b) { // the whole block continues the last one's run
					n += s.backslashes
				}
				s.backslashes = n
				break
			}
			q := i + j
			n := trailingBackslashes(b[i:q])
			if i == 0 && n == q { // the run began in the last block
				n += s.backslashes
			}
			s.backslashes = 0
			i = q + 1
			if n%2 == 0 {
				s.inString = false
			}
			continue
		}
		for i < len(b) && !structural[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch b[i] {
		case '"':
			s.inString = true
		case '{', '[':
			s.depth++
		case '}':
			s.depth--
		case ']':
			if s.depth == 0 {
				s.buf = append(s.buf, b[from:i]...)
				s.emit(out, true)
				return true
			}
			s.depth--
		case ',':
			if s.depth != 0 {
				break
			}
			s.entries++
			if s.entries >= chunkEntries || len(s.buf)+i-from >= chunkBytes {
				s.buf = append(s.buf, b[from:i]...)
				s.emit(out, true)
				s.start(s.first + s.entries)
				from = i + 1
			}
		}
		i++
	}
	s.buf = append(s.buf, b[from:]...)
	return false
}

func trailingBackslashes(b []byte) int {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n
}

// emit sends the current chunk, closed with "]" when whole.
func (s *splitter) emit(out chan<- harChunk, whole bool) {
	if whole {
		s.buf = append(s.buf, ']')
	}
	out <- harChunk{seq: s.seq, first: s.first, data: s.buf}
	s.seq++
}
