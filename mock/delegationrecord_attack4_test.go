package mock

import (
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock/tlsca"
)

// TestAttack4DelegationTokenNotRecorded: RELIABILITY.md "A game backend's
// sign-in: service to service" promises the delegation token "in no export
// of the record of calls, nor the log" (TestServiceSignInLeavesNoSecret).
// The user's XSTS answer carries it in DisplayClaims.xui[0] (s2s.go
// addDelegation), a field the record keeps whole (internal/xblauth
// wholeName).
func TestAttack4DelegationTokenNotRecorded(t *testing.T) {
	const me = "2533274791234567"
	r := newS2SRig(t, tlsca.Partner{})
	r.h = Must(New(Config{Now: func() time.Time { return r.now }}))
	dt := r.delegationToken(me, "RETAIL")
	if len(dt) < 40 {
		t.Fatalf("a delegation token of %d bytes: the test would prove nothing", len(dt))
	}
	noSecretIn(t, exportsOf(t, r.h), dt)
}
