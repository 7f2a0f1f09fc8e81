package analyze

import (
	"encoding/binary"
	"errors"
	"math"
)

// A group's filled chunks of calls are kept encoded (Analyzer.add): a
// long trace's calls are most of what an analysis holds (a what-if of 2 M
// calls: 64 MB of 32-byte recs), and a group's calls repeat themselves:
// the same few requests, the same status, times and indexes a little
// apart. Each rec is written against the one before it in its chunk:
//
//	head byte   headSame: status, ra, answer, users, batch and social are the
//	            previous rec's
//	at          varint of the difference (wrapping), nanoseconds
//	key         uvarint i: the chunk's i-th distinct key; i equal to the
//	            keys so far: a new key follows, 8 bytes little-endian
//	index       varint of the difference (wrapping)
//	the rest    unless headSame: varints of status, ra and users, an
//	            uvarint of answer, then batch and social, a byte each
//
// A chunk of recChunk calls of one request made every few seconds takes
// about 9 bytes a call.
const headSame = 1

// encodeRecs appends recs, encoded as one chunk, to b.
func encodeRecs(b []byte, recs []rec) []byte {
	var prev rec
	var keys []uint64
	for i, r := range recs {
		same := i > 0 && r.status == prev.status && r.ra == prev.ra && r.answer == prev.answer && r.users == prev.users && r.batch == prev.batch && r.social == prev.social
		head := byte(0)
		if same {
			head = headSame
		}
		b = append(b, head)
		b = binary.AppendVarint(b, int64(uint64(r.at)-uint64(prev.at)))
		k := 0
		for k < len(keys) && keys[k] != r.key {
			k++
		}
		b = binary.AppendUvarint(b, uint64(k))
		if k == len(keys) {
			keys = append(keys, r.key)
			b = binary.LittleEndian.AppendUint64(b, r.key)
		}
		b = binary.AppendVarint(b, int64(r.index-prev.index))
		if !same {
			b = binary.AppendVarint(b, int64(r.status))
			b = binary.AppendVarint(b, int64(r.ra))
			b = binary.AppendVarint(b, int64(r.users))
			b = binary.AppendUvarint(b, uint64(r.answer))
			social := byte(0)
			if r.social {
				social = 1
			}
			b = append(b, byte(r.batch), social)
		}
		prev = r
	}
	return b
}

var errChunk = errors.New("analyze: a chunk of calls does not decode")

// decodeRecs appends the recs of the chunk b (encodeRecs) to out. A chunk
// that does not decode (never one encodeRecs wrote) is an error, not a
// panic.
func decodeRecs(out []rec, b []byte) ([]rec, error) {
	var prev rec
	var keys []uint64
	varint := func() (int64, bool) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	for first := true; len(b) > 0; first = false {
		head := b[0]
		b = b[1:]
		r := prev
		d, ok := varint()
		if !ok || head&^headSame != 0 || (first && head == headSame) {
			return out, errChunk
		}
		r.at = int64(uint64(prev.at) + uint64(d))
		k, n := binary.Uvarint(b)
		if n <= 0 || k > uint64(len(keys)) {
			return out, errChunk
		}
		b = b[n:]
		if k == uint64(len(keys)) {
			if len(b) < 8 {
				return out, errChunk
			}
			keys = append(keys, binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		r.key = keys[k]
		di, ok := varint()
		if !ok {
			return out, errChunk
		}
		r.index = prev.index + int32(di)
		if head&headSame == 0 {
			status, ok1 := varint()
			ra, ok2 := varint()
			users, ok3 := varint()
			answer, n := binary.Uvarint(b)
			if !ok1 || !ok2 || !ok3 || n <= 0 || answer > math.MaxUint32 || len(b) < n+2 || b[n+1] > 1 {
				return out, errChunk
			}
			b = b[n:]
			r.status, r.ra, r.users, r.answer = int16(status), int32(ra), int16(users), uint32(answer)
			r.batch, r.social = int8(b[0]), b[1] == 1
			b = b[2:]
		}
		out = append(out, r)
		prev = r
	}
	return out, nil
}
