package hresult

import "testing"

// FuzzFromStatus checks the mapping's invariants for any status.
func FuzzFromStatus(f *testing.F) {
	for _, s := range append(listed, 0, -1, 200, 1223, 418, 600) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, status int) {
		h := FromStatus(status)
		ok2xx := (status >= 200 && status < 300) || status == 1223
		if ok2xx != (h == S_OK) {
			t.Fatalf("FromStatus(%d) = %v; 2xx=%v", status, h, ok2xx)
		}
		if h == S_OK {
			return
		}
		if !h.Failed() || h.Name() == "" {
			t.Fatalf("FromStatus(%d) = %v: not a named failure", status, h)
		}
		if st, ok := h.Status(); ok && st != status {
			t.Fatalf("FromStatus(%d).Status() = %d", status, st)
		} else if !ok && h != HTTP_E_STATUS_UNEXPECTED {
			t.Fatalf("FromStatus(%d) = %v encodes no status", status, h)
		}
		_ = h.String()
	})
}

func BenchmarkFromStatus(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = FromStatus(listed[i%len(listed)])
	}
}
