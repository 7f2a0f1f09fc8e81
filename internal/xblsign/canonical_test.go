package xblsign

import (
	"crypto/elliptic"
	"math/big"
	"testing"
	"time"
)

// twin returns h with its s replaced by n−s: the other signature of the
// same digest, which verifies under the same key and needs no key to make.
func twin(h Header) Header {
	n := elliptic.P256().Params().N
	s := new(big.Int).Sub(n, new(big.Int).SetBytes(h.S[:]))
	s.FillBytes(h.S[:])
	return h
}

// TestCanonicalJoinsTwins: a signature and its twin (r, n−s) both verify,
// and have one canonical form, its s in the lower half of the order;
// canonical forms of different signatures differ.
func TestCanonicalJoinsTwins(t *testing.T) {
	h, err := ParseHeader(pythonSignature)
	if err != nil {
		t.Fatal(err)
	}
	tw := twin(h)
	if err := Verify(pythonRequest(tw.String()), ProofKeyOf(&pythonKey(t).PublicKey), pythonTime, DefaultPolicy(), time.Minute); err != nil {
		t.Fatalf("the twin does not verify (%v): the test's premise is wrong", err)
	}
	if got, want := tw.Canonical().String(), h.Canonical().String(); got != want {
		t.Errorf("twins' canonical forms differ:\n got %s\nwant %s", got, want)
	}
	half := new(big.Int).Rsh(elliptic.P256().Params().N, 1)
	for _, x := range []Header{h, tw} {
		c := x.Canonical()
		if s := new(big.Int).SetBytes(c.S[:]); s.Cmp(half) > 0 {
			t.Errorf("canonical s %x is in the upper half", c.S)
		}
		if c.R != x.R || !c.Time.Equal(x.Time) || c.Version != x.Version {
			t.Errorf("Canonical changed more than s: %+v from %+v", c, x)
		}
	}
	other := h
	other.R[0] ^= 1
	if other.Canonical() == h.Canonical() {
		t.Error("two different signatures have one canonical form")
	}
}
