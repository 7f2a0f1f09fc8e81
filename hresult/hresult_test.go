package hresult

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// listed are the statuses libHttpClient (Include/httpClient/pal.h) gives an HTTP_E_STATUS_* code.
var listed = []int{300, 301, 302, 303, 304, 305, 307, 400, 401, 402, 403, 404, 405, 406,
	407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 423, 424, 426, 428,
	429, 431, 449, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511}

func TestFromStatus(t *testing.T) {
	tests := []struct {
		status int
		want   HRESULT
	}{
		{200, S_OK},
		{204, S_OK},
		{299, S_OK},
		{1223, S_OK},
		{429, HTTP_E_STATUS_429_TOO_MANY_REQUESTS},
		{401, HTTP_E_STATUS_DENIED},
		{500, HTTP_E_STATUS_SERVER_ERROR},
		{503, HTTP_E_STATUS_SERVICE_UNAVAIL},
		{0, HTTP_E_STATUS_UNEXPECTED},
		{-1, HTTP_E_STATUS_UNEXPECTED},
		{100, HTTP_E_STATUS_UNEXPECTED},
		{199, HTTP_E_STATUS_UNEXPECTED},
		{306, HTTP_E_STATUS_UNEXPECTED},
		{308, HTTP_E_STATUS_UNEXPECTED},
		{418, HTTP_E_STATUS_UNEXPECTED},
		{425, HTTP_E_STATUS_UNEXPECTED},
		{509, HTTP_E_STATUS_UNEXPECTED},
		{512, HTTP_E_STATUS_UNEXPECTED},
		{600, HTTP_E_STATUS_UNEXPECTED},
		{1 << 20, HTTP_E_STATUS_UNEXPECTED},
	}
	for _, tt := range tests {
		if got := FromStatus(tt.status); got != tt.want {
			t.Errorf("FromStatus(%d) = %v, want %v", tt.status, got, tt.want)
		}
	}
}

func TestFromStatusListed(t *testing.T) {
	for _, s := range listed {
		got := FromStatus(s)
		if want := HRESULT(0x80190000 | uint32(s)); got != want {
			t.Errorf("FromStatus(%d) = %v, want %v", s, got, want)
		}
		if st, ok := got.Status(); !ok || st != s {
			t.Errorf("FromStatus(%d).Status() = %d, %v; want %d, true", s, st, ok, s)
		}
		if got.Name() == "" {
			t.Errorf("FromStatus(%d) has no name", s)
		}
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		h    HRESULT
		want string
	}{
		{HTTP_E_STATUS_429_TOO_MANY_REQUESTS, "0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS"},
		{S_OK, "0x00000000 S_OK"},
		{E_ABORT, "0x80004004 E_ABORT"},
		{E_HC_NO_NETWORK, "0x89235006 E_HC_NO_NETWORK"},
		{E_XBL_AUTH_NO_TOKEN, "0x89235206 E_XBL_AUTH_NO_TOKEN"},
		{0x1, "0x00000001"},
		{0xDEADBEEF, "0xDEADBEEF"},
	}
	for _, tt := range tests {
		if got := tt.h.String(); got != tt.want {
			t.Errorf("HRESULT(%#x).String() = %q, want %q", uint32(tt.h), got, tt.want)
		}
		if got := tt.h.Error(); got != tt.want {
			t.Errorf("HRESULT(%#x).Error() = %q, want %q", uint32(tt.h), got, tt.want)
		}
	}
}

func TestFailedFacility(t *testing.T) {
	tests := []struct {
		h        HRESULT
		failed   bool
		facility uint16
		code     uint16
	}{
		{S_OK, false, 0, 0},
		{HTTP_E_STATUS_429_TOO_MANY_REQUESTS, true, 25, 429},
		{E_HC_NO_NETWORK, true, 2339, 0x5006},
		{E_INVALIDARG, true, 7, 0x57},
	}
	for _, tt := range tests {
		if got := tt.h.Failed(); got != tt.failed {
			t.Errorf("%v.Failed() = %v, want %v", tt.h, got, tt.failed)
		}
		if got := tt.h.Succeeded(); got == tt.failed {
			t.Errorf("%v.Succeeded() = %v, want %v", tt.h, got, !tt.failed)
		}
		if got := tt.h.Facility(); got != tt.facility {
			t.Errorf("%v.Facility() = %d, want %d", tt.h, got, tt.facility)
		}
		if got := tt.h.Code(); got != tt.code {
			t.Errorf("%v.Code() = %#x, want %#x", tt.h, got, tt.code)
		}
	}
}

func TestStatusNotHTTP(t *testing.T) {
	for _, h := range []HRESULT{S_OK, E_FAIL, HTTP_E_STATUS_UNEXPECTED, 0x80190200, 0x801901A2} {
		if st, ok := h.Status(); ok {
			t.Errorf("%v.Status() = %d, true; want 0, false", h, st)
		}
	}
}

// reporter is an error type that reports an HRESULT, as the module's
// transport and client errors do.
type reporter struct{ code HRESULT }

func (r *reporter) Error() string        { return "reporter" }
func (r *reporter) HRESULT() HRESULT     { return r.code }
func (r *reporter) Is(target error) bool { return Is(r, target) }

func TestReporterThroughWrapping(t *testing.T) {
	e := &reporter{HTTP_E_STATUS_429_TOO_MANY_REQUESTS}
	wrapped := &url.Error{Op: "Get", URL: "https://profile.xboxlive.com/", Err: fmt.Errorf("call: %w", e)}
	if !errors.Is(wrapped, HRESULT(0x801901AD)) {
		t.Errorf("errors.Is(%v, 0x801901AD) = false, want true", wrapped)
	}
	if errors.Is(wrapped, HTTP_E_STATUS_SERVER_ERROR) {
		t.Errorf("errors.Is(%v, HTTP_E_STATUS_SERVER_ERROR) = true, want false", wrapped)
	}
	if Of(wrapped) != HTTP_E_STATUS_429_TOO_MANY_REQUESTS {
		t.Errorf("Of(%v) = %v, want the 429 code", wrapped, Of(wrapped))
	}
	if Of(fmt.Errorf("x: %w", E_OUTOFMEMORY)) != E_OUTOFMEMORY {
		t.Error("a bare HRESULT is not found in the chain")
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want HRESULT
	}{
		{"nil", nil, S_OK},
		{"hresult", E_INVALIDARG, E_INVALIDARG},
		{"wrapped hresult", fmt.Errorf("x: %w", E_OUTOFMEMORY), E_OUTOFMEMORY},
		{"canceled", context.Canceled, E_ABORT},
		{"url canceled", &url.Error{Op: "Get", URL: "u", Err: context.Canceled}, E_ABORT},
		{"deadline", context.DeadlineExceeded, HTTP_E_STATUS_REQUEST_TIMEOUT},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, HTTP_E_STATUS_REQUEST_TIMEOUT},
		{"network down", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ENETDOWN)}, E_HC_NO_NETWORK},
		{"network unreachable", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}, E_FAIL},
		{"host unreachable", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, E_FAIL},
		{"dns temporary", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, E_FAIL},
		{"dns timeout", &net.DNSError{Err: "i/o timeout", IsTimeout: true}, HTTP_E_STATUS_REQUEST_TIMEOUT},
		{"dns not found", &net.DNSError{Err: "no such host", IsNotFound: true}, E_FAIL},
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, E_FAIL},
		{"unsupported", errors.ErrUnsupported, E_NOT_SUPPORTED},
		{"other", errors.New("boom"), E_FAIL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.err); got != tt.want {
				t.Errorf("Of(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestNamesComplete(t *testing.T) {
	// Every named code must round-trip through its String.
	for h, n := range names {
		if got := h.String(); got != h.hex()+" "+n {
			t.Errorf("String(%s) = %q", n, got)
		}
	}
}
