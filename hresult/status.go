package hresult

// FromStatus maps an HTTP status code onto an HRESULT exactly as XSAPI does:
// 2xx and 1223 (the WinINet spelling of 204) give S_OK; the statuses that have an
// HTTP_E_STATUS_* constant give 0x80190000|status; any other status, including
// 1xx and out-of-range values, gives HTTP_E_STATUS_UNEXPECTED.
func FromStatus(code int) HRESULT {
	if (code >= 200 && code < 300) || code == 1223 {
		return S_OK
	}
	if code < 300 || code > 511 {
		return HTTP_E_STATUS_UNEXPECTED
	}
	h := HRESULT(0x80190000 | uint32(code))
	if _, ok := names[h]; ok {
		return h
	}
	return HTTP_E_STATUS_UNEXPECTED
}

// Status returns the HTTP status that h encodes and true, or 0 and false when h
// is not one of the HTTP_E_STATUS_* codes that FromStatus produces (including
// HTTP_E_STATUS_UNEXPECTED, which encodes no particular status).
func (h HRESULT) Status() (int, bool) {
	if h == HTTP_E_STATUS_UNEXPECTED || h&0xFFFF0000 != 0x80190000 {
		return 0, false
	}
	// FromStatus of the code h holds gives h back: not so for the
	// facility's codes that encode no status (0x80190005,
	// HTTP_E_STATUS_UNEXPECTED_SERVER_ERROR, holds 5).
	code := int(h.Code())
	if FromStatus(code) != h {
		return 0, false
	}
	return code, true
}
