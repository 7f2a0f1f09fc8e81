package mock_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/mock"
	"github.com/xblgo/fgrl/ratelimit"
)

// held: mock/pipeline.go count(): "The RateLimit headers say both windows,
// the title's burst and the sustain window that binds ... a refusal says
// the window that refused"; RELIABILITY.md (fourth wave, held): "a refusal
// of the title's own sustain agrees in its body, headers and Retry-After".
// Two titles of one publisher, calls at random instants on a fake clock,
// with the published figures (100/200) and a lower publisher sustain (20):
// every 429's body names a window (maxRequests, periodInSeconds) that the
// RateLimit-Policy header lists, whose RateLimit state has r=0 and t equal
// to Retry-After.
func TestAttack9fStoreHeld429AgreesWithHeaders(t *testing.T) {
	for name, js := range map[string]string{"published": attack9dPublishedStore, "lowPublisher": attack9dLowPublisherStore} {
		rng := rand.New(rand.NewPCG(1, 2))
		now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
		h := mock.Must(mock.New(mock.Config{Limits: attack9dLimits(t, js), Now: func() time.Time { return now },
			Publishers: map[string]string{attack9dTitleA: "p", attack9dTitleB: "p"}}))
		refused := 0
		for i := range 1000 {
			now = now.Add(time.Duration(rng.IntN(400)) * time.Millisecond)
			title := attack9dTitleA
			if rng.IntN(3) == 0 {
				title = attack9dTitleB
			}
			w := attack9dStore(h, attack9dXUID(1+i%2), title)
			if w.Code != http.StatusTooManyRequests {
				continue
			}
			refused++
			b, err := ratelimit.ParseBody(w.Body.Bytes())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			policy, state := w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit")
			pol, st := strings.Split(policy, ", "), strings.Split(state, ", ")
			found := false
			for j := range pol {
				if j < len(st) && strings.HasSuffix(pol[j], fmt.Sprintf(";q=%d;w=%d", b.MaxRequests, b.PeriodInSeconds)) &&
					strings.HasSuffix(st[j], ";r=0;t="+w.Header().Get("Retry-After")) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s call %d (%s): body %d/%d s %s, Retry-After %s; headers %q / %q disagree", name, i, title,
					b.MaxRequests, b.PeriodInSeconds, b.Aspect, w.Header().Get("Retry-After"), policy, state)
				if refused > 5 {
					return
				}
			}
			if ra, _ := strconv.Atoi(w.Header().Get("Retry-After")); ra <= 0 {
				t.Errorf("%s: Retry-After %q", name, w.Header().Get("Retry-After"))
			}
		}
		if refused == 0 {
			t.Errorf("%s: no 429", name)
		}
	}
}
