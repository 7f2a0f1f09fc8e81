package analyze

import (
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"slices"
)

// A .saz archive's zip is read without archive/zip, whose reader holds
// every file's header (about 400 bytes a file, several times the bytes a
// small session's files take in the archive) before the first file can be
// opened: the directory is read streaming, and of each session's file only
// what opens it is kept (a zipFile, 56 bytes). Stored and deflated files
// are read, checked against their size and checksum; zip64 archives too.
//
// Every byte of the directory is accounted for: it is read by the count of
// files its end record gives, and must fill the bytes the end record says
// it takes, up to the end record itself, so that no file is listed that a
// reader by count (archive/zip, Fiddler's) sees and this one does not. The
// files read must not overlap: each ends before the next file read starts
// (zipFile.limit), so no byte of the archive is read twice; and what the
// files inflate to is bounded per archive (inflateBudget), not per file
// only.

// zipFile is what opens one file of a zip.
type zipFile struct {
	n            int   // its session
	kind         byte  // 'c', 's' or 'm'
	width        uint8 // the digits of its session's number in its name
	flags        uint16
	method       uint16
	crc          uint32
	csize, usize uint64
	offset       uint64 // of its local header
	limit        uint64 // where the next file read (or the directory) starts
}

// Errors of a zip that cannot be read.
var (
	errZipFormat   = errors.New("zip: not a valid zip file")
	errZipChecksum = errors.New("zip: checksum error")
	errZipMethod   = errors.New("zip: unsupported compression method or encryption")
	errZipOverlap  = errors.New("zip: the file overlaps another file of the archive")
	errZipInflate  = errors.New("zip: the archive inflates past its bound")
)

// zipDirectory calls f with the name of each file of the zip r holds, and
// what opens it, reading the zip's central directory streaming, and
// returns where the directory starts. The name is valid only during the
// call.
func zipDirectory(r io.ReaderAt, size int64, f func(name []byte, zf zipFile)) (uint64, error) {
	dir, err := zipDirectoryEnd(r, size)
	if err != nil {
		return 0, err
	}
	br := bufio.NewReader(io.NewSectionReader(r, int64(dir.off), int64(dir.size)))
	var h [46]byte
	var buf []byte
	var read uint64
	le := binary.LittleEndian
	for range dir.files {
		if _, err := io.ReadFull(br, h[:]); err != nil || le.Uint32(h[0:]) != 0x02014b50 {
			return 0, fmt.Errorf("%w: the directory holds fewer files than its end record's %d", errZipFormat, dir.files)
		}
		zf := zipFile{flags: le.Uint16(h[8:]), method: le.Uint16(h[10:]), crc: le.Uint32(h[16:]),
			csize: uint64(le.Uint32(h[20:])), usize: uint64(le.Uint32(h[24:])), offset: uint64(le.Uint32(h[42:]))}
		nameLen, extraLen, commentLen := int(le.Uint16(h[28:])), int(le.Uint16(h[30:])), int(le.Uint16(h[32:]))
		buf = slices.Grow(buf[:0], nameLen+extraLen)[:nameLen+extraLen]
		if _, err := io.ReadFull(br, buf); err != nil {
			return 0, errZipFormat
		}
		if _, err := br.Discard(commentLen); err != nil {
			return 0, errZipFormat
		}
		read += 46 + uint64(nameLen+extraLen+commentLen)
		zf.zip64(buf[nameLen:])
		f(buf[:nameLen], zf)
	}
	if read != dir.size {
		return 0, fmt.Errorf("%w: the directory's %d files take %d bytes, not the %d its end record gives", errZipFormat, dir.files, read, dir.size)
	}
	return dir.off, nil
}

// zip64 takes the sizes and offset a zip64 extra field gives for those
// the header leaves at 0xFFFFFFFF.
func (zf *zipFile) zip64(extra []byte) {
	for len(extra) >= 4 {
		id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
		if n > len(extra)-4 {
			return
		}
		field := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != 0x0001 {
			continue
		}
		for _, v := range []*uint64{&zf.usize, &zf.csize, &zf.offset} {
			if *v == 0xFFFFFFFF && len(field) >= 8 {
				*v, field = binary.LittleEndian.Uint64(field), field[8:]
			}
		}
	}
}

// zipDir is where a zip's central directory is, as its end record says.
type zipDir struct {
	off, size, files uint64
}

// zipDirectoryEnd finds the central directory from the end of the zip (its
// zip64 form when the end record points to one), which must end where its
// end record (or zip64 end record) starts.
func zipDirectoryEnd(r io.ReaderAt, size int64) (zipDir, error) {
	le := binary.LittleEndian
	tail := make([]byte, min(size, 22+65535))
	end := size - int64(len(tail))
	if err := readAt(r, tail, end); err != nil {
		return zipDir{}, err
	}
	i := len(tail) - 22
	for ; i >= 0; i-- { // the last end record whose comment fits
		if string(tail[i:i+4]) == "PK\x05\x06" && i+22+int(le.Uint16(tail[i+20:])) <= len(tail) {
			break
		}
	}
	if i < 0 {
		return zipDir{}, errZipFormat
	}
	rec := tail[i:]
	dir := zipDir{off: uint64(le.Uint32(rec[16:])), size: uint64(le.Uint32(rec[12:])), files: uint64(le.Uint16(rec[10:]))}
	at := uint64(end + int64(i)) // where the directory must end
	if dir.files == 0xFFFF || dir.size == 0xFFFFFFFF || dir.off == 0xFFFFFFFF {
		var loc [20]byte
		var rec64 [56]byte
		locAt := end + int64(i) - 20
		if locAt < 0 || readAt(r, loc[:], locAt) != nil || le.Uint32(loc[:]) != 0x07064b50 {
			return zipDir{}, errZipFormat
		}
		at = le.Uint64(loc[8:])
		if at > uint64(locAt) || readAt(r, rec64[:], int64(at)) != nil || le.Uint32(rec64[:]) != 0x06064b50 {
			return zipDir{}, errZipFormat
		}
		dir = zipDir{off: le.Uint64(rec64[48:]), size: le.Uint64(rec64[40:]), files: le.Uint64(rec64[32:])}
	}
	if dir.off > at || dir.size != at-dir.off {
		return zipDir{}, fmt.Errorf("%w: the directory the end record gives (%d bytes at %d) does not end where the end record starts (%d)", errZipFormat, dir.size, dir.off, at)
	}
	return dir, nil
}

// readAt fills b from r at off.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	switch {
	case n == len(b):
		return nil
	case err == nil, err == io.EOF:
		return io.ErrUnexpectedEOF
	}
	return err
}

// inflateBudget is the most the files read of an archive of size bytes
// may hold, inflated: 256 MiB and 64 bytes per byte of the archive. Text
// deflates to a tenth or so; a file of one repeated byte to a thousandth,
// so that without a bound per archive a small one could make reading it
// take a thousand times the work of its size.
func inflateBudget(size int64) int64 { return 256<<20 + 64*size }

// zipOpener opens the files of one zip, reusing its decompressor; left is
// what the files it opens may still hold (inflateBudget), and over says
// that one went past it.
type zipOpener struct {
	r     io.ReaderAt
	flate io.ReadCloser
	left  int64
	over  bool
}

// open returns the file's content, which fails at its end when the
// content is not the size or checksum the directory gives, and at once
// when the file overlaps the next one read (or the directory).
func (o *zipOpener) open(zf *zipFile) (io.Reader, error) {
	var h [30]byte
	switch {
	case zf.offset > 1<<62 || zf.csize > 1<<62:
		return nil, fmt.Errorf("%w: no file header at byte %d", errZipFormat, zf.offset)
	case zf.offset+30 > zf.limit:
		return nil, fmt.Errorf("%w: at byte %d, before byte %d", errZipOverlap, zf.offset, zf.limit)
	case readAt(o.r, h[:], int64(zf.offset)) != nil || binary.LittleEndian.Uint32(h[:]) != 0x04034b50:
		return nil, fmt.Errorf("%w: no file header at byte %d", errZipFormat, zf.offset)
	}
	data := int64(zf.offset) + 30 + int64(binary.LittleEndian.Uint16(h[26:])) + int64(binary.LittleEndian.Uint16(h[28:]))
	if uint64(data)+zf.csize > zf.limit {
		return nil, fmt.Errorf("%w: from byte %d to %d, past byte %d", errZipOverlap, zf.offset, uint64(data)+zf.csize, zf.limit)
	}
	var r io.Reader = io.NewSectionReader(o.r, data, int64(zf.csize))
	switch {
	case zf.flags&1 != 0: // encrypted
		return nil, errZipMethod
	case zf.method == 0:
	case zf.method == 8:
		if o.flate == nil {
			o.flate = flate.NewReader(r)
		} else {
			o.flate.(flate.Resetter).Reset(r, nil)
		}
		r = o.flate
	default:
		return nil, errZipMethod
	}
	return &zipChecked{r: r, o: o, crc: crc32.NewIEEE(), want: zf.crc, left: zf.usize}, nil
}

// zipChecked is a file's content, checked at its end, and counted against
// its opener's budget.
type zipChecked struct {
	r    io.Reader
	o    *zipOpener
	crc  hash.Hash32
	want uint32
	left uint64
}

func (z *zipChecked) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	if z.o.left -= int64(n); z.o.left < 0 {
		z.o.over = true
		return 0, errZipInflate
	}
	z.crc.Write(p[:n])
	if uint64(n) > z.left {
		return n, errZipChecksum // longer than the directory says
	}
	z.left -= uint64(n)
	switch {
	case err == io.EOF && (z.left != 0 || z.crc.Sum32() != z.want):
		return n, errZipChecksum
	case errors.Is(err, io.ErrUnexpectedEOF), err != nil && err != io.EOF:
		return n, fmt.Errorf("zip: %w", err)
	}
	return n, err
}
