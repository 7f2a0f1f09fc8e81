package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xblgo/fgrl/limits"
	"github.com/xblgo/fgrl/mock"
)

const attack47URL = "https://profile.xboxlive.com/users/me/profile"

// attack47RT is an in-process base RoundTripper.
type attack47RT func(*http.Request) (*http.Response, error)

func (f attack47RT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func attack47Resp(r *http.Request, status int, h http.Header, body string) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: status, Status: fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: r,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}
}

// attack47Sleep sleeps d, or until r's context ends.
func attack47Sleep(r *http.Request, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	}
}

// attack47ProfileLimits is a profile rule of burst b (sustain 300).
func attack47ProfileLimits(t *testing.T, b int) *limits.Limits {
	t.Helper()
	l, err := limits.Read(strings.NewReader(fmt.Sprintf(`{"rules": [{"service": "profile", "hosts": ["profile.xboxlive.com"], "burst": %d, "sustain": 300}]}`, b)))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type attack47Result struct {
	status int
	body   string
	err    error
	took   time.Duration
}

// attack47Do sends one GET of url as xuid through tr, with extra headers given
// as name, value pairs, and reads its body whole.
func attack47Do(tr http.RoundTripper, ctx context.Context, url, xuid string, hdr ...string) attack47Result {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", mock.Token(xuid, title))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return attack47Result{err: err, took: time.Since(start)}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return attack47Result{status: resp.StatusCode, body: string(b), err: err, took: time.Since(start)}
}

// TestAttack47CoalNoRetryFollowerGivesUpBeforeItsOwnCallCould: ErrSharedReadTimeout's
// godoc: it "is returned to a caller that waited for another call's
// identical read (CoalesceReads) as long as its own call could have taken
// (its wait bound plus one attempt timeout) without an answer"; Policy.NoRetry:
// "The budget and the Retry-After cache still apply: it may wait before its
// one attempt."
//
// A NoRetry read waits for its budget (burst spent, 16 s), then its one
// attempt takes 6 s: 200 at 22 s. A NoRetry follower of it may itself wait
// up to the 20 s window and then one 20 s attempt, yet it is given up at
// 20 s with ErrSharedReadTimeout (its bound counts no wait for NoRetry). A
// third caller making the same call alone (another Accept, so it shares
// nothing) gets its 200 at 22 s: the follower fails with no reason of its own.
func TestAttack47CoalNoRetryFollowerGivesUpBeforeItsOwnCallCould(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		base := attack47RT(func(r *http.Request) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/fill") {
				return attack47Resp(r, 200, nil, "fill"), nil
			}
			sent.Add(1)
			if err := attack47Sleep(r, 6*time.Second); err != nil {
				return nil, err
			}
			return attack47Resp(r, 200, nil, "answer"), nil
		})
		tr := &Transport{TitleID: title, CoalesceReads: true, Limits: attack47ProfileLimits(t, 2), Base: base, Policy: Policy{NoRetry: true}}
		ctx := context.Background()
		for _, p := range []string{"/fill1", "/fill2"} { // the key's burst is spent until 16 s
			if r := attack47Do(tr, ctx, "https://profile.xboxlive.com"+p, xuid1); r.err != nil {
				t.Fatal(r.err)
			}
		}
		var wg sync.WaitGroup
		var lead, follower, alone attack47Result
		wg.Go(func() { lead = attack47Do(tr, ctx, attack47URL, xuid1) })
		synctest.Wait()
		wg.Go(func() { follower = attack47Do(tr, ctx, attack47URL, xuid1) })
		wg.Go(func() { alone = attack47Do(tr, ctx, attack47URL, xuid1, "Accept", "application/json") })
		wg.Wait()
		t.Logf("leader: %d %v at %v; follower: %d %v at %v; same call alone: %d %v at %v; %d requests",
			lead.status, lead.err, lead.took, follower.status, follower.err, follower.took, alone.status, alone.err, alone.took, sent.Load())
		if lead.status != 200 || alone.status != 200 {
			t.Fatalf("setup: the leader and the lone call should get 200")
		}
		if follower.status != 200 {
			t.Errorf("NoRetry follower: %v after %v, while the read it waited for answered 200 at %v and the same call made alone got 200 at %v: "+
				"its own call could take its 20 s wait bound plus a 20 s attempt", follower.err, follower.took, lead.took, alone.took)
		}
	})
}

// TestAttack47CoalWokenFollowersRefusedBesideTheirOwnRead: CoalesceReads' godoc:
// "CoalesceReads makes identical GETs share one request: a GET ... as one
// that started less than 5 s ago waits for that one's answer", and a caller
// "whose wait ended with the other call's caller giving up" makes "a whole
// call of its own"; "The XLTA's repeated-call rule is what it saves".
//
// Five FailFast followers wait for a leader whose caller gives up at 1 s
// (budget: burst 3). Woken together, one of them leads a new request
// for the read; the others do not wait for it but each send their own
// uncoalesced: the budget runs out and the rest are refused locally
// (ThrottleError), at once, while the identical read one of them started
// that very instant answers 200 two seconds later. They fail with no
// reason of their own; five callers arriving fresh at 1 s would all have
// shared one request.
func TestAttack47CoalWokenFollowersRefusedBesideTheirOwnRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		base := attack47RT(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			if err := attack47Sleep(r, 2*time.Second); err != nil {
				return nil, err
			}
			return attack47Resp(r, 200, nil, "answer"), nil
		})
		tr := &Transport{TitleID: title, CoalesceReads: true, Limits: attack47ProfileLimits(t, 3), Base: base, Policy: Policy{FailFast: true}}
		lctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var lead attack47Result
		wg.Go(func() { lead = attack47Do(tr, lctx, attack47URL, xuid1) })
		synctest.Wait()
		const followers = 5
		res := make([]attack47Result, followers)
		for i := range followers {
			wg.Go(func() { res[i] = attack47Do(tr, context.Background(), attack47URL, xuid1) })
		}
		synctest.Wait()
		time.Sleep(time.Second)
		cancel() // the leader's caller gives up
		wg.Wait()
		if !errors.Is(lead.err, context.Canceled) {
			t.Fatalf("leader: %v", lead.err)
		}
		ok, refused := 0, 0
		for i, r := range res {
			var te *ThrottleError
			switch {
			case r.status == 200:
				ok++
			case errors.As(r.err, &te) && te.Local:
				refused++
				t.Logf("follower %d: refused locally after %v: %v", i, r.took, r.err)
			default:
				t.Logf("follower %d: %d %v after %v", i, r.status, r.err, r.took)
			}
		}
		if ok != followers {
			t.Errorf("after the leader's caller gave up, %d of %d followers got 200 and %d were refused locally by the budget; "+
				"%d requests sent for one read (the leader's and %d of the followers'): the followers did not share the read one of them led",
				ok, followers, refused, sent.Load(), sent.Load()-1)
		}
	})
}

// held: CoalesceReads' godoc: "a caller whose deadline is later than the
// one it waited for sends its own when that one ended in an error or a
// status XSAPI retries". A leader with a 1.5 s deadline gets a 503 it cannot
// retry in time; a follower without a deadline sends its own (200), one
// with a 10 s deadline too, one whose deadline (1 s) is earlier than the
// leader's gets the 503 with it. Budget on, a rule matches. Requests: the
// leader's and one per later-deadline follower.
func TestAttack47CoalHeldLaterDeadlineSendsAfter503(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		base := attack47RT(func(r *http.Request) (*http.Response, error) {
			if sent.Add(1) == 1 {
				if err := attack47Sleep(r, 200*time.Millisecond); err != nil {
					return nil, err
				}
				return attack47Resp(r, 503, nil, "busy"), nil
			}
			return attack47Resp(r, 200, nil, "answer"), nil
		})
		tr := &Transport{TitleID: title, CoalesceReads: true, Limits: attack47ProfileLimits(t, 10), Base: base}
		var wg sync.WaitGroup
		lctx, c1 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer c1()
		var lead, none, later, earlier attack47Result
		wg.Go(func() { lead = attack47Do(tr, lctx, attack47URL, xuid1) })
		synctest.Wait()
		lc, c2 := context.WithTimeout(context.Background(), 10*time.Second)
		defer c2()
		ec, c3 := context.WithTimeout(context.Background(), time.Second)
		defer c3()
		wg.Go(func() { none = attack47Do(tr, context.Background(), attack47URL, xuid1) })
		wg.Go(func() { later = attack47Do(tr, lc, attack47URL, xuid1) })
		wg.Go(func() { earlier = attack47Do(tr, ec, attack47URL, xuid1) })
		wg.Wait()
		if lead.status != 503 || earlier.status != 503 {
			t.Errorf("leader %d %v, earlier-deadline follower %d %v; want the 503", lead.status, lead.err, earlier.status, earlier.err)
		}
		if none.status != 200 || later.status != 200 {
			t.Errorf("later-deadline followers: %d %v, %d %v; want their own 200", none.status, none.err, later.status, later.err)
		}
		if n := sent.Load(); n != 3 {
			t.Errorf("%d requests; want 3", n)
		}
	})
}

// held: CoalesceReads' godoc: a caller waits "never past its context"; a
// caller whose leader's caller gave up makes "a whole call of its own, so a
// caller that waited takes at most twice its own call's time"; "never
// across users".
//
// A storm under synctest, budget on (a rule matches): two users, leaders
// and followers cancelled one after another (each with a cause of its
// own), followers with short and long deadlines, some whose own context
// ends during their own call; a server that takes 3 s. Every caller ended
// with 200 and its own user's answer, or with its own cause, or at its own
// deadline; none took more than twice its own call's bound (40 s); no more
// requests were sent than callers.
func TestAttack47CoalHeldStormOfCancelledLeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent atomic.Int32
		base := attack47RT(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			if err := attack47Sleep(r, 3*time.Second); err != nil {
				return nil, err
			}
			return attack47Resp(r, 200, nil, r.Header.Get("Authorization")), nil
		})
		tr := &Transport{TitleID: title, CoalesceReads: true, Limits: attack47ProfileLimits(t, 1000), Base: base}
		const callers = 40
		type caller struct {
			xuid     string
			at       time.Duration // when it starts
			cancelAt time.Duration // 0: never
			deadline time.Duration // 0: none
			cause    error
			res      attack47Result
			ended    time.Duration
		}
		cs := make([]*caller, callers)
		for i := range cs {
			c := &caller{xuid: xuid1, at: time.Duration(i) * 250 * time.Millisecond, cause: fmt.Errorf("caller %d gave up", i)}
			if i%4 == 3 {
				c.xuid = xuid2
			}
			switch i % 5 {
			case 0, 2: // cancelled some time after it starts: leaders among them
				c.cancelAt = c.at + time.Duration(700+(i*137)%2500)*time.Millisecond
			case 1:
				c.deadline = c.at + time.Duration(500+(i*211)%6000)*time.Millisecond
			}
			cs[i] = c
		}
		origin := time.Now()
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				time.Sleep(c.at)
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				if c.cancelAt > 0 {
					tm := time.AfterFunc(c.cancelAt-c.at, func() { cancel(c.cause) })
					defer tm.Stop()
				}
				if c.deadline > 0 {
					var cd context.CancelFunc
					ctx, cd = context.WithDeadline(ctx, origin.Add(c.deadline))
					defer cd()
				}
				c.res = attack47Do(tr, ctx, attack47URL, c.xuid)
				c.ended = time.Since(origin)
			})
		}
		wg.Wait()
		bound := tr.followBound(Policy{})
		for i, c := range cs {
			r := c.res
			switch {
			case r.err == nil && r.status == 200:
				if r.body != mock.Token(c.xuid, title) {
					t.Errorf("caller %d got another user's answer", i)
				}
			case r.err != nil && c.cancelAt > 0 && (errors.Is(r.err, c.cause) || errors.Is(r.err, context.Canceled)):
				// its cause, or context.Canceled from a base that returns
				// its context's Err (this one does) when it led the read
				if c.ended < c.cancelAt {
					t.Errorf("caller %d ended with its cause before it gave up", i)
				}
			case r.err != nil && c.deadline > 0 && errors.Is(r.err, context.DeadlineExceeded):
				if c.ended < c.deadline {
					t.Errorf("caller %d: deadline exceeded at %v, before its own deadline %v", i, c.ended, c.deadline)
				}
			default:
				t.Errorf("caller %d (cancel %v, deadline %v) failed with no reason of its own: %d %v at %v", i, c.cancelAt, c.deadline, r.status, r.err, c.ended)
			}
			if c.deadline > 0 && c.ended > c.deadline {
				t.Errorf("caller %d ended at %v, past its deadline %v", i, c.ended, c.deadline)
			}
			if r.took > 2*bound {
				t.Errorf("caller %d took %v, more than twice its own call's bound %v", i, r.took, bound)
			}
		}
		if n := sent.Load(); n > callers {
			t.Errorf("%d requests for %d callers", n, callers)
		}
		t.Logf("%d requests for %d callers", sent.Load(), callers)
	})
}

// held: CoalesceReads' godoc: a caller waits "no longer than its own call
// could take (ErrSharedReadTimeout)". With the default policy (20 s window,
// 20 s attempts) and a base that never answers nor ends with its
// context, a follower fails with ErrSharedReadTimeout at 40 s, and one with
// a 3 s deadline at 3 s.
func TestAttack47CoalHeldFollowerBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		base := attack47RT(func(r *http.Request) (*http.Response, error) {
			select {
			case <-release:
			case <-r.Context().Done():
				<-release // a base that does not honour its context
			}
			return nil, errors.New("late")
		})
		tr := &Transport{TitleID: title, CoalesceReads: true, DisableBudget: true, Base: base}
		var wg sync.WaitGroup
		wg.Go(func() { attack47Do(tr, context.Background(), attack47URL, xuid1) })
		synctest.Wait()
		var plain, short attack47Result
		sctx, c := context.WithTimeout(context.Background(), 3*time.Second)
		defer c()
		wg.Go(func() { plain = attack47Do(tr, context.Background(), attack47URL, xuid1) })
		wg.Go(func() { short = attack47Do(tr, sctx, attack47URL, xuid1) })
		time.Sleep(time.Minute)
		close(release)
		wg.Wait()
		if !errors.Is(plain.err, ErrSharedReadTimeout) || plain.took != 40*time.Second {
			t.Errorf("follower: %v at %v; want ErrSharedReadTimeout at 40 s", plain.err, plain.took)
		}
		if !errors.Is(short.err, context.DeadlineExceeded) || short.took != 3*time.Second {
			t.Errorf("follower with 3 s: %v at %v", short.err, short.took)
		}
	})
}
