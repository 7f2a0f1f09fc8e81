package analyze

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recsFrom makes recs of fuzz bytes: each rec's fields from the next
// bytes, some drawn from a few values so that keys and the rest repeat as
// a group's calls do.
func recsFrom(b []byte) []rec {
	var out []rec
	for len(b) >= 16 && len(out) < 2*recChunk {
		r := rec{
			at:     int64(binary.LittleEndian.Uint64(b)),
			key:    uint64(b[8] % 4),
			index:  int32(binary.LittleEndian.Uint16(b[9:])) - 1000,
			ra:     int32(int8(b[11])),
			status: int16(b[12]%3) * 200,
			users:  int16(int8(b[13])),
			batch:  int8(b[14] % 3),
			social: b[15]&1 == 1,
			answer: uint32(b[15] >> 2),
		}
		if b[8]&0x80 != 0 {
			r.key = binary.LittleEndian.Uint64(b) ^ math.MaxUint64
		}
		if b[15]&2 != 0 { // the extremes
			r.at, r.index, r.ra, r.status, r.users, r.batch = math.MinInt64, math.MaxInt32, math.MinInt32, math.MaxInt16, math.MinInt16, math.MinInt8
		}
		out = append(out, r)
		b = b[16:]
	}
	return out
}

// FuzzRecChunk: a chunk of any recs decodes to the same recs, and no bytes
// make the decoder panic or return more recs than bytes.
func FuzzRecChunk(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef"))
	f.Add(make([]byte, 64))
	f.Add([]byte{1, 2, 0, 0})
	f.Add(encodeRecs(nil, []rec{{at: 5, key: 7, index: 1, ra: -1, status: 429, users: -1}, {at: 4, key: 7, index: 3, ra: -1, status: 429, users: -1}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs := recsFrom(b)
		enc := encodeRecs(nil, recs)
		got, err := decodeRecs(nil, enc)
		if err != nil || !cmp.Equal(got, recs, cmp.AllowUnexported(rec{})) {
			t.Fatalf("round trip of %d recs: %v\n%s", len(recs), err, cmp.Diff(recs, got, cmp.AllowUnexported(rec{})))
		}
		if out, _ := decodeRecs(nil, b); len(out) > len(b) {
			t.Fatalf("%d bytes decoded to %d recs", len(b), len(out))
		}
	})
}

// TestRecChunkSmall: a group's usual calls (one request every few
// seconds, answered 200) take about 9 bytes a call encoded, against a
// rec's 32.
func TestRecChunkSmall(t *testing.T) {
	recs := make([]rec, recChunk)
	for i := range recs {
		recs[i] = rec{at: 1_772_395_200e9 + int64(i)*10_800_000_000, key: 0xdeadbeefcafe, index: int32(i * 6000), ra: -1, status: 200, users: -1}
	}
	enc := encodeRecs(nil, recs)
	if per := float64(len(enc)) / recChunk; per > 10 {
		t.Errorf("%.1f bytes a call encoded, want at most 10", per)
	}
	if _, err := decodeRecs(nil, enc[:len(enc)-1]); err == nil {
		t.Error("a chunk cut short decoded")
	}
}

// TestReportTwiceWithChunks: a report reads a long group's encoded chunks
// without consuming them: a second report, and one after more calls, see
// every call.
func TestReportTwiceWithChunks(t *testing.T) {
	a, _ := New(nil, nil)
	add := func(from, n int) {
		for i := from; i < from+n; i++ {
			c := Call{Index: i, Time: t0.Add(time.Duration(n-i) * time.Second), Method: "GET", // backwards: the report sorts
				URL: "https://profile.xboxlive.com/users/me/profile/settings", Authorization: "XBL3.0 x=1;t", Status: 200}
			a.Add(&c)
		}
	}
	add(0, 3*recChunk+5)
	r1, r2 := a.Report(), a.Report()
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if r1.Judged != 3*recChunk+5 || string(j1) != string(j2) {
		t.Errorf("two reports: %d judged, differ: %s", r1.Judged, cmp.Diff(string(j1), string(j2)))
	}
	add(3*recChunk+5, recChunk)
	if r3 := a.Report(); r3.Judged != 4*recChunk+5 {
		t.Errorf("after more calls: %d judged", r3.Judged)
	}
}
