package transport

import (
	"testing"
	"testing/synctest"

	"github.com/xblgo/fgrl/throttle"
)

// TestAttack36TableLimitCountedAsDrift: users A and B confirm profile's burst 6
// (the table says 10). User C's 429 then reports burst 10, the table's own
// limit. The transport keeps a key limit of 10 for C (rightly overriding the
// scope's 6 for C), and counted it in Stats.LimitsLearned and listed it in
// LearnedLimits with Learned equal to Table, where both said they hold
// drift from the data alone. The docs now say what the transport does
// (LearnedLimit: "or, for one user, where a learned limit the 429 did not
// say was in force (Learned may then equal Table)"; Stats.LimitsLearned:
// "that differ from the one the call counted against, the data's or a
// learned one"): this checks it, and that C's calls count against 10.
func TestAttack36TableLimitCountedAsDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base, _ := attack35Served(map[string]int{attack35A: 6, attack35B: 6, attack35C: 10})
		tr := &Transport{Base: base, TitleID: title, Budget: &throttle.MemoryBudgetStore{}, RetryWindow: -1}
		attack31ProfileAs(tr, attack35A)
		attack31ProfileAs(tr, attack35B)
		if n := attack31LearnedBurst(tr); n != 6 {
			t.Fatalf("two users' 429s of burst 6: confirmed %d, want 6", n)
		}
		before := tr.Stats().LimitsLearned
		attack31ProfileAs(tr, attack35C)
		listed := 0
		var user string
		for _, l := range tr.LearnedLimits() {
			if l.User != "" && l.Table == 10 && l.Learned == 10 {
				listed++
				user = l.User
			}
		}
		if after := tr.Stats().LimitsLearned; listed != 1 || after != before+1 {
			t.Errorf("C's 429 of the table's 10 over the scope's learned 6: %d such rows in LearnedLimits %+v, Stats.LimitsLearned %d -> %d; want one, counted once", listed, tr.LearnedLimits(), before, after)
		}
		if n := attack35Key(tr, user); n != 10 {
			t.Errorf("C's calls count against %d, want 10 (the service's word for C)", n)
		}
	})
}
