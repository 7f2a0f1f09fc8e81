// Package hresult implements the Windows/Xbox HRESULT codes that XSAPI and
// libHttpClient report, including the mapping from HTTP status codes.
//
// An HRESULT is a Go error: errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS)
// holds for the bare code and for any Reporter carrying it (a
// transport.ThrottleError, a client.Error), through any wrapping.
package hresult

import "strconv"

// HRESULT is a Windows result code. Bit 31 is the severity (set for failure);
// bits 16-28 the facility; bits 0-15 the code. The zero value is S_OK.
//
// HRESULT implements error so that a code can be returned and matched directly;
// a successful code used as an error reads "0x00000000 S_OK".
type HRESULT uint32

// Failed reports whether h is a failure code (severity bit set), like the
// FAILED macro.
func (h HRESULT) Failed() bool { return h&0x80000000 != 0 }

// Succeeded reports whether h is a success code, like the SUCCEEDED macro.
func (h HRESULT) Succeeded() bool { return !h.Failed() }

// Facility returns the facility of h (25 for HTTP, 2339 for Xbox). It reads
// bits 16-28, as MAKE_HRESULT writes them: FACILITY_XBOX does not fit the
// nominal 11-bit field.
func (h HRESULT) Facility() uint16 { return uint16(h>>16) & 0x1fff }

// Code returns the low 16 bits of h; for an HTTP_E_STATUS_* code this is the
// HTTP status.
func (h HRESULT) Code() uint16 { return uint16(h) }

// Name returns the symbolic name of h, such as
// "HTTP_E_STATUS_429_TOO_MANY_REQUESTS", or "" when h is not a known code.
func (h HRESULT) Name() string { return names[h] }

// String returns h in hexadecimal followed by its name when known, for example
// "0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS".
func (h HRESULT) String() string {
	hex := h.hex()
	if n := names[h]; n != "" {
		return hex + " " + n
	}
	return hex
}

// Error implements error; it returns the same text as String.
func (h HRESULT) Error() string { return h.String() }

func (h HRESULT) hex() string {
	s := strconv.FormatUint(uint64(h), 16)
	const zeros = "00000000"
	b := make([]byte, 0, 10)
	b = append(b, "0x"...)
	b = append(b, zeros[:8-len(s)]...)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'f' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}
