package client

// Outside attack (helper 168) on paging: continuation tokens that repeat,
// alternate, grow, or carry path and query injection.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// attack53Drain runs a listing to its end (at most limit items) and
// returns its error.
func attack53Drain(seq func(yield func(struct{}, error) bool), limit int) error {
	var last error
	n := 0
	seq(func(_ struct{}, err error) bool {
		if err != nil {
			last = err
			return false
		}
		n++
		return n < limit
	})
	return last
}

// held: "A listing whose continuation token comes back to one it already
// gave (A, B, A, or A again at once: the same page for ever) ... ends
// with an error" (page.go), even when every page holds an item.
func TestAttack53PagingTokensThatRepeatEnd(t *testing.T) {
	for name, tokens := range map[string][]string{
		"same":      {"A", "A", "A", "A", "A", "A"},
		"alternate": {"A", "B", "A", "B", "A", "B"},
		"cycle3":    {"A", "B", "C", "A", "B", "C"},
	} {
		var n atomic.Int64
		srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
			i := int(n.Add(1)) - 1
			tok := tokens[min(i, len(tokens)-1)]
			if strings.Contains(r.URL.Path, "/leaderboards/") {
				fmt.Fprintf(w, `{"leaderboardInfo":{"totalCount":100},"userList":[{"xuid":"%d","rank":%d}],"pagingInfo":{"continuationToken":%s}}`, 2533274700000000+i, i+1, attack53JSON(tok))
				return
			}
			fmt.Fprintf(w, `{"achievements":[{"id":"%d"}],"pagingInfo":{"continuationToken":%s}}`, i, attack53JSON(tok))
		})
		c := attack53Client(t, srv, nil, "achievements.xboxlive.com", "leaderboards.xboxlive.com")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := attack53Drain(func(yield func(struct{}, error) bool) {
			for _, err := range c.As(me).AllAchievements(ctx, me, title, 1) {
				if !yield(struct{}{}, err) {
					return
				}
			}
		}, 1000)
		cancel()
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("AllAchievements, tokens %s: %v after %d requests, want an *Error", name, err, n.Load())
		}
		if n.Load() > int64(len(tokens)) {
			t.Errorf("AllAchievements, tokens %s: %d requests", name, n.Load())
		}
		n.Store(0)
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		err = attack53Drain(func(yield func(struct{}, error) bool) {
			for _, err := range c.As(me).AllLeaderboard(ctx, scid, "kills", 1) {
				if !yield(struct{}{}, err) {
					return
				}
			}
		}, 1000)
		cancel()
		if !errors.As(err, &e) {
			t.Errorf("AllLeaderboard, tokens %s: %v after %d requests, want an *Error", name, err, n.Load())
		}
	}
}

// held: "or that gives maxEmptyPages pages in a row without an item,
// ends with an error": tokens that grow without bound (each twice the
// last), with empty pages, end.
func TestAttack53PagingGrowingTokensEnd(t *testing.T) {
	var n atomic.Int64
	srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		fmt.Fprintf(w, `{"achievements":[],"pagingInfo":{"continuationToken":%s}}`, attack53JSON(strings.Repeat("g", 1<<min(i, 18))))
	})
	c := attack53Client(t, srv, nil, "achievements.xboxlive.com")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	for _, e := range c.As(me).AllAchievements(ctx, me, title, 1) {
		if e != nil {
			err = e
			break
		}
	}
	var e *Error
	if !errors.As(err, &e) || ctx.Err() != nil {
		t.Errorf("growing tokens: %v after %d requests, want an *Error before the deadline", err, n.Load())
	}
	if n.Load() > maxEmptyPages+1 {
		t.Errorf("growing tokens: %d requests", n.Load())
	}
}

// held: a continuation token is sent back as the continuationToken query
// value, escaped: whatever it holds ("../", "?x=", "#", "%2F", CR LF, a
// whole URL), every request stays on its service's host and path and
// carries the token exactly.
func TestAttack53PagingTokenInjection(t *testing.T) {
	hostile := []string{
		"../../../users/xuid(2533274799999999)/profile/settings",
		"?x=1&titleId=1&maxItems=9999",
		"#frag",
		"%2F..%2F..%2Fprofile",
		"a\r\nHost: evil.example\r\nX-Injected: 1",
		"http://evil.example/steal",
		"//evil.example/x",
		"a b&c=d;e=f",
		"\x00\x7f\u00ff",
	}
	type seen struct{ host, path, rawQuery string }
	var mu sync.Mutex
	var got []seen
	var tok atomic.Value
	srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, seen{r.Host, r.URL.Path, r.URL.RawQuery})
		mu.Unlock()
		next := ""
		if r.URL.Query().Get("continuationToken") == "" {
			next = tok.Load().(string)
		}
		switch {
		case strings.Contains(r.URL.Path, "/leaderboards/"):
			fmt.Fprintf(w, `{"leaderboardInfo":{"totalCount":2},"userList":[{"xuid":"%s","rank":1}],"pagingInfo":{"continuationToken":%s}}`, other, attack53JSON(next))
		case strings.Contains(r.URL.Path, "/history/"):
			fmt.Fprintf(w, `{"titles":[{"titleId":1}],"pagingInfo":{"continuationToken":%s,"totalRecords":2}}`, attack53JSON(next))
		default:
			fmt.Fprintf(w, `{"achievements":[{"id":"1"}],"pagingInfo":{"continuationToken":%s}}`, attack53JSON(next))
		}
	})
	c := attack53Client(t, srv, nil, "achievements.xboxlive.com", "leaderboards.xboxlive.com")
	u := c.As(me)
	for _, h := range hostile {
		tok.Store(h)
		for _, call := range []struct {
			name, host, path string
			page             func(ctx context.Context, token string) (string, error)
		}{
			{"ListAchievements", "achievements.xboxlive.com", "/users/xuid(" + me + ")/achievements", func(ctx context.Context, token string) (string, error) {
				p, err := u.ListAchievements(ctx, me, title, 1, token)
				return p.ContinuationToken, err
			}},
			{"GetAchievementHistory", "achievements.xboxlive.com", "/users/xuid(" + me + ")/history/titles", func(ctx context.Context, token string) (string, error) {
				p, err := u.GetAchievementHistory(ctx, me, 1, token)
				return p.ContinuationToken, err
			}},
			{"GetLeaderboard", "leaderboards.xboxlive.com", "/scids/" + scid + "/leaderboards/kills", func(ctx context.Context, token string) (string, error) {
				p, err := u.GetLeaderboard(ctx, scid, "kills", 1, token)
				return p.ContinuationToken, err
			}},
		} {
			mu.Lock()
			got = nil
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			next, err := call.page(ctx, "")
			if err == nil {
				_, err = call.page(ctx, next)
			}
			cancel()
			if err != nil {
				t.Errorf("%s, token %q: %v", call.name, h, err)
				continue
			}
			mu.Lock()
			if len(got) != 2 {
				t.Errorf("%s, token %q: %d requests, want 2", call.name, h, len(got))
			}
			for i, s := range got {
				if s.host != call.host || s.path != call.path {
					t.Errorf("%s, token %q: request %d went to %s %s, want %s %s", call.name, h, i, s.host, s.path, call.host, call.path)
				}
			}
			if len(got) == 2 {
				q, err := url.ParseQuery(got[1].rawQuery)
				if err != nil || q.Get("continuationToken") != h || len(q["continuationToken"]) != 1 || len(q["maxItems"]) != 1 || len(q["titleId"]) > 1 || q.Has("x") || q.Has("c") {
					t.Errorf("%s, token %q: second request's query %q (%v)", call.name, h, got[1].rawQuery, err)
				}
			}
			mu.Unlock()
		}
	}
}

func attack53JSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
