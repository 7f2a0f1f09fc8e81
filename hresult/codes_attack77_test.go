package hresult

import (
	"fmt"
	"testing"
)

// held: FromStatus: "2xx and 1223 give S_OK; the statuses that have an
// HTTP_E_STATUS_* constant give 0x80190000|status; any other status, including
// 1xx and out-of-range values, gives HTTP_E_STATUS_UNEXPECTED"; Status is the
// inverse of FromStatus and false for codes FromStatus does not produce.
func TestAttack77FromStatusStatusHeld(t *testing.T) {
	for _, c := range []int{-1, 0, 100, 199, 1223 - 65536, 1223 + 65536, 65536 + 429, -65536 + 429, 1 << 40, -(1 << 62), 0x80190000 | 429, 456, 512, 599, 600, 999} {
		if c == 1223 {
			continue
		}
		got := FromStatus(c)
		if c >= 200 && c < 300 {
			continue
		}
		if got != HTTP_E_STATUS_UNEXPECTED {
			t.Errorf("FromStatus(%d) = %v, want HTTP_E_STATUS_UNEXPECTED", c, got)
		}
	}
	if FromStatus(1223) != S_OK || FromStatus(299) != S_OK || FromStatus(200) != S_OK {
		t.Error("2xx / 1223 not S_OK")
	}
	for c := 300; c <= 511; c++ {
		h := FromStatus(c)
		if h == HTTP_E_STATUS_UNEXPECTED {
			continue
		}
		if uint32(h) != 0x80190000|uint32(c) || h.Name() == "" {
			t.Errorf("FromStatus(%d) = %v", c, h)
		}
		if s, ok := h.Status(); !ok || s != c {
			t.Errorf("%v.Status() = %d, %v; want %d", h, s, ok, c)
		}
	}
	for _, h := range []HRESULT{HTTP_E_STATUS_UNEXPECTED, HTTP_E_STATUS_UNEXPECTED_SERVER_ERROR, 0x801901C8, 0x80190000 | 204, 0x80190000 | 1223, 0x00190000 | 429, 0x881901AD, S_OK} {
		if s, ok := h.Status(); ok {
			t.Errorf("%v.Status() = %d, true; want false", h, s)
		}
	}
	if got := fmt.Sprint(HTTP_E_STATUS_429_TOO_MANY_REQUESTS); got != "0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS" {
		t.Errorf("String = %q", got)
	}
	if got := HRESULT(0x89235001).Facility(); got != 2339 {
		t.Errorf("Facility = %d", got)
	}
	if got := S_OK.Error(); got != "0x00000000 S_OK" {
		t.Errorf("S_OK.Error() = %q", got)
	}
}
