package throttle_test

import (
	"testing"
	"time"

	"github.com/xblgo/fgrl/throttle"
	"github.com/xblgo/fgrl/throttle/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.ServerRule(t, func(a throttle.Align) throttle.ServerStore { return &throttle.MemoryServerStore{Align: a} })
	t.Run("reset", func(t *testing.T) { storetest.Reset(t, &throttle.MemoryServerStore{}) })
	storetest.BudgetRule(t, func(margin time.Duration) throttle.BudgetStore { return &throttle.MemoryBudgetStore{Margin: margin} })
	t.Run("learned", func(t *testing.T) { storetest.Learned(t, &throttle.MemoryBudgetStore{}) })
}
