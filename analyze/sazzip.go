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
// what opens it is kept (a zipFile, 48 bytes). Stored and deflated files
// are read, checked against their size and checksum; zip64 archives too.

// zipFile is what opens one file of a zip.
type zipFile struct {
	n            int  // its session
	kind         byte // 'c', 's' or 'm'
	flags        uint16
	method       uint16
	crc          uint32
	csize, usize uint64
	offset       uint64 // of its local header
}

// Errors of a zip that cannot be read.
var (
	errZipFormat   = errors.New("zip: not a valid zip file")
	errZipChecksum = errors.New("zip: checksum error")
	errZipMethod   = errors.New("zip: unsupported compression method or encryption")
)

// zipDirectory calls f with the name of each file of the zip r holds, and
// what opens it, reading the zip's central directory streaming. The name is
// valid only during the call.
func zipDirectory(r io.ReaderAt, size int64, f func(name []byte, zf zipFile)) error {
	dirOff, dirSize, err := zipDirectoryEnd(r, size)
	if err != nil {
		return err
	}
	br := bufio.NewReader(io.NewSectionReader(r, int64(dirOff), int64(dirSize)))
	var h [46]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(br, h[:]); err == io.EOF {
			return nil
		} else if err != nil || binary.LittleEndian.Uint32(h[0:]) != 0x02014b50 {
			return errZipFormat
		}
		le := binary.LittleEndian
		zf := zipFile{flags: le.Uint16(h[8:]), method: le.Uint16(h[10:]), crc: le.Uint32(h[16:]),
			csize: uint64(le.Uint32(h[20:])), usize: uint64(le.Uint32(h[24:])), offset: uint64(le.Uint32(h[42:]))}
		nameLen, extraLen, commentLen := int(le.Uint16(h[28:])), int(le.Uint16(h[30:])), int(le.Uint16(h[32:]))
		buf = slices.Grow(buf[:0], nameLen+extraLen)[:nameLen+extraLen]
		if _, err := io.ReadFull(br, buf); err != nil {
			return errZipFormat
		}
		if _, err := br.Discard(commentLen); err != nil {
			return errZipFormat
		}
		zf.zip64(buf[nameLen:])
		f(buf[:nameLen], zf)
	}
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

// zipDirectoryEnd finds the central directory from the end of the zip (its
// zip64 form when the end record points to one).
func zipDirectoryEnd(r io.ReaderAt, size int64) (off, n uint64, err error) {
	le := binary.LittleEndian
	tail := make([]byte, min(size, 22+65535))
	end := size - int64(len(tail))
	if err := readAt(r, tail, end); err != nil {
		return 0, 0, err
	}
	i := len(tail) - 22
	for ; i >= 0; i-- { // the last end record whose comment fits
		if string(tail[i:i+4]) == "PK\x05\x06" && i+22+int(le.Uint16(tail[i+20:])) <= len(tail) {
			break
		}
	}
	if i < 0 {
		return 0, 0, errZipFormat
	}
	rec := tail[i:]
	off, n = uint64(le.Uint32(rec[16:])), uint64(le.Uint32(rec[12:]))
	if le.Uint16(rec[10:]) == 0xFFFF || n == 0xFFFFFFFF || off == 0xFFFFFFFF {
		var loc [20]byte
		var rec64 [56]byte
		at := end + int64(i) - 20
		if at < 0 || readAt(r, loc[:], at) != nil || le.Uint32(loc[:]) != 0x07064b50 {
			return 0, 0, errZipFormat
		}
		if at64 := le.Uint64(loc[8:]); at64 > uint64(at) || readAt(r, rec64[:], int64(at64)) != nil || le.Uint32(rec64[:]) != 0x06064b50 {
			return 0, 0, errZipFormat
		}
		off, n = le.Uint64(rec64[48:]), le.Uint64(rec64[40:])
	}
	if off > uint64(size) || n > uint64(size)-off {
		return 0, 0, errZipFormat
	}
	return off, n, nil
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

// zipOpener opens the files of one zip, reusing its decompressor.
type zipOpener struct {
	r     io.ReaderAt
	flate io.ReadCloser
}

// open returns the file's content, which fails at its end when the
// content is not the size or checksum the directory gives.
func (o *zipOpener) open(zf *zipFile) (io.Reader, error) {
	var h [30]byte
	if zf.offset > 1<<62 || zf.csize > 1<<62 || readAt(o.r, h[:], int64(zf.offset)) != nil || binary.LittleEndian.Uint32(h[:]) != 0x04034b50 {
		return nil, fmt.Errorf("%w: no file header at byte %d", errZipFormat, zf.offset)
	}
	data := int64(zf.offset) + 30 + int64(binary.LittleEndian.Uint16(h[26:])) + int64(binary.LittleEndian.Uint16(h[28:]))
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
	return &zipChecked{r: r, crc: crc32.NewIEEE(), want: zf.crc, left: zf.usize}, nil
}

// zipChecked is a file's content, checked at its end.
type zipChecked struct {
	r    io.Reader
	crc  hash.Hash32
	want uint32
	left uint64
}

func (z *zipChecked) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
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
