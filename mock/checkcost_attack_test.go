package mock

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAttackCheckCostNotJournalTimesExpectations: POST /_fgrl/api/check takes
// a body of up to 64 KiB (mock/admin/api.go maxBody), which holds 5,461
// expectations `{"count":0},`; each one makes Check copy every call the
// record holds and build its URL (h.Calls, up to 10,000 calls and 1 KiB
// URLs), under the lock every request takes. Measured on this machine:
// one 64 KiB check over a full record ran 1m40s and allocated 88 GiB.
//
// The promise: RELIABILITY.md:7 ("Bad input never panics, hangs or grows
// memory"); docs/MOCK.md:119-131 (the record is bounded: the latest
// 10,000 within 32 MiB; the check reads it). A check should cost about the
// record it reads, not the record once per expectation: here 50
// expectations (a body of 600 bytes) over 10,000 calls must allocate less
// than the record's own bound, 32 MiB. Now: about 18 MB per expectation.
func TestAttackCheckCostNotJournalTimesExpectations(t *testing.T) {
	h := Must(New(Config{}))
	pad := strings.Repeat("a", 80)
	for range maxCalls {
		do(t, h, "GET", "https://example.xboxlive.com/nothing/here?pad="+pad, "", "")
	}
	ex := make([]Expectation, 50)
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	res, err := h.Check(CheckOptions{Expect: ex})
	took := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("50 expectations over %d calls: %v, %d MiB allocated, %d failures", maxCalls, took, alloc>>20, len(res.Failures))
	if alloc > maxCallsBytes {
		t.Errorf("a check of 50 expectations allocated %d MiB over a record bounded at %d MiB: each expectation copies the whole record (a 64 KiB check: 5,461 copies)",
			alloc>>20, maxCallsBytes>>20)
	}
}

// TestCheckExpectationLinesBounded: a check's unmet expectations are
// listed up to maxCheckLines, then counted, as its 429s and its
// certification's findings are (seen by the attack above).
func TestCheckExpectationLinesBounded(t *testing.T) {
	h := Must(New(Config{}))
	ex := make([]Expectation, 50)
	for i := range ex {
		ex[i].Count = 1 // none made
	}
	res, err := h.Check(CheckOptions{Expect: ex})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || len(res.Failures) != maxCheckLines+1 || !strings.Contains(res.Failures[maxCheckLines], "and 30 more") {
		t.Errorf("50 unmet expectations: %d lines (last %q), want %d and a count", len(res.Failures), res.Failures[len(res.Failures)-1], maxCheckLines+1)
	}
}
