package hresult

import (
	"errors"
	"fmt"
	"testing"
)

// TestAttack2StatusOfUnexpectedServerError: HTTP_E_STATUS_UNEXPECTED_SERVER_ERROR
// (0x80190005) is a named code in the HTTP facility, so Status reads its
// low 16 bits as a status: (5, true). No FromStatus gives it (XSAPI's
// convert_http_status_to_hresult, microsoft/xbox-live-api
// Source/Shared/utils.cpp, maps no status onto it: 2xx and 1223 give
// S_OK, the listed statuses MAKE_HTTP_HRESULT(status), "default: hr =
// HTTP_E_STATUS_UNEXPECTED"), and 5 is no HTTP status.
//
// Promised (hresult/status.go, Status): "Status returns the HTTP status
// that h encodes and true, or 0 and false when h is not one of the
// HTTP_E_STATUS_* codes that FromStatus produces (including
// HTTP_E_STATUS_UNEXPECTED, which encodes no particular status)."
func TestAttack2StatusOfUnexpectedServerError(t *testing.T) {
	if st, ok := HTTP_E_STATUS_UNEXPECTED_SERVER_ERROR.Status(); ok {
		t.Errorf("%v.Status() = %d, true; want 0, false (FromStatus never produces it)", HTTP_E_STATUS_UNEXPECTED_SERVER_ERROR, st)
	}
}

// held: FromStatus against XSAPI's convert_http_status_to_hresult
// (microsoft/xbox-live-api Source/Shared/utils.cpp), status by status
// from -1 to 70,000: "2xx are http success codes", "else if
// (httpStatusCode == 1223) hr = S_OK", the 300..511 statuses its switch
// names as MAKE_HTTP_HRESULT(status) (0x80190000|status), "default: hr =
// HTTP_E_STATUS_UNEXPECTED". A status past 65535 whose low bits name a
// listed status (65536+429) is not 429. Every Status of a FromStatus
// result reads back the status.
func TestAttack2FromStatusMatchesXSAPI(t *testing.T) {
	xsapi := map[int]bool{}
	for _, s := range []int{300, 301, 302, 303, 304, 305, 307,
		400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417,
		421, 422, 423, 424, 426, 428, 429, 431, 449, 451,
		500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511} {
		xsapi[s] = true
	}
	for s := -1; s <= 70000; s++ {
		var want HRESULT
		switch {
		case s >= 200 && s < 300, s == 1223:
			want = S_OK
		case xsapi[s]:
			want = HRESULT(0x80190000 | uint32(s))
		default:
			want = HTTP_E_STATUS_UNEXPECTED
		}
		got := FromStatus(s)
		if got != want {
			t.Errorf("FromStatus(%d) = %v, want %v", s, got, want)
		}
		if st, ok := got.Status(); ok != xsapi[s] || ok && st != s {
			t.Errorf("FromStatus(%d).Status() = %d, %v", s, st, ok)
		}
	}
	if FromStatus(429) != 0x801901AD || HTTP_E_STATUS_429_TOO_MANY_REQUESTS.Name() != "HTTP_E_STATUS_429_TOO_MANY_REQUESTS" {
		t.Error("429 is not 0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS")
	}
	// The SPEC's other codes, by value.
	for h, v := range map[HRESULT]uint32{E_FAIL: 0x80004005, E_ABORT: 0x80004004, E_OUTOFMEMORY: 0x8007000E,
		E_INVALIDARG: 0x80070057, E_UNEXPECTED: 0x8000FFFF, E_PENDING: 0x8000000A, E_NOT_SUPPORTED: 0x80070032,
		E_HC_NO_NETWORK: 0x89235006, E_XBL_RUNTIME_ERROR: 0x89235200, E_XBL_AUTH_NO_TOKEN: 0x89235206} {
		if uint32(h) != v {
			t.Errorf("%s = %#x, want %#x", h.Name(), uint32(h), v)
		}
	}
	// errors.Is through wrapping, and a different code does not match.
	err := fmt.Errorf("x: %w", HTTP_E_STATUS_429_TOO_MANY_REQUESTS)
	if !errors.Is(err, HTTP_E_STATUS_429_TOO_MANY_REQUESTS) || errors.Is(err, HTTP_E_STATUS_SERVICE_UNAVAIL) || Of(err) != 0x801901AD {
		t.Error("a wrapped 429 is not matched as 429 alone")
	}
}
