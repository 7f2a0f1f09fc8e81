package client

// Outside attack (helper 168): one user's answer reaching another, with
// the transport's coalescing and read cache on, and with BatchWindow.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xblgo/fgrl/transport"
)

// attack53Caller is the user a request's Authorization names.
func attack53Caller(r *http.Request) string {
	a := r.Header.Get("Authorization")
	_, tok, _ := strings.Cut(a, ";")
	return strings.TrimPrefix(tok, "ATK168SECRETTOKEN")
}

// held: CoalesceReads: "with the same credentials ... never across
// users"; ReadCacheTTL: "the same read with the same credentials made
// again within it is answered from memory"; BatchWindow: "A batch merges
// only lookups of one acting user": users reading the same thing at once
// and one after another each get the answer made for them.
func TestAttack53UsersNeverShareAnswers(t *testing.T) {
	var served atomic.Int64
	srv := attack53Server(t, func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		caller := attack53Caller(r)
		time.Sleep(50 * time.Millisecond) // calls overlap
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/profile/settings") && r.Method == "GET":
			x := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/users/xuid("), ")/profile/settings")
			fmt.Fprintf(w, `{"profileUsers":[{"id":"%s","settings":[{"id":"Gamertag","value":"for-%s"}]}]}`, x, caller)
		case r.URL.Path == "/users/batch/profile/settings":
			var in struct{ UserIDs []string }
			json.NewDecoder(r.Body).Decode(&in)
			var us []string
			for _, x := range in.UserIDs {
				us = append(us, fmt.Sprintf(`{"id":"%s","settings":[{"id":"Gamertag","value":"for-%s"}]}`, x, caller))
			}
			fmt.Fprintf(w, `{"profileUsers":[%s]}`, strings.Join(us, ","))
		case r.URL.Path == "/users/batch":
			var in struct{ Users []string }
			json.NewDecoder(r.Body).Decode(&in)
			var ps []string
			for _, x := range in.Users {
				ps = append(ps, fmt.Sprintf(`{"xuid":"%s","state":"Online","lastSeen":{"titleName":"for-%s"}}`, x, caller))
			}
			fmt.Fprintf(w, `[%s]`, strings.Join(ps, ","))
		default:
			x := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/users/xuid("), ")")
			fmt.Fprintf(w, `{"xuid":"%s","state":"Online","lastSeen":{"titleName":"for-%s"}}`, x, caller)
		}
	})
	users := []string{"2533274700000101", "2533274700000102", "2533274700000103"}
	target := "2533274799999999"
	for _, window := range []time.Duration{0, 20 * time.Millisecond} {
		tr := &transport.Transport{TitleID: title, DisableBudget: true, CoalesceReads: true, ReadCacheTTL: 10 * time.Second}
		c := attack53Client(t, srv, tr, "userpresence.xboxlive.com", "profile.xboxlive.com")
		c.cfg.BatchWindow = window
		for round := 0; round < 2; round++ { // concurrent, then from the cache
			var wg sync.WaitGroup
			var mu sync.Mutex
			for i := 0; i < 8; i++ {
				for _, u := range users {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						defer cancel()
						xs := []string{target}
						if i%2 == 1 {
							xs = []string{target, fmt.Sprintf("25332747000002%02d", i)}
						}
						for _, x := range xs {
							p, err := c.As(u).GetPresence(ctx, x)
							mu.Lock()
							if err != nil {
								t.Errorf("window %v: %s's GetPresence(%s): %v", window, u, x, err)
							} else if p.LastSeen == nil || p.LastSeen.TitleName != "for-"+u {
								t.Errorf("window %v: %s got the presence made for %+v", window, u, p.LastSeen)
							}
							mu.Unlock()
							pr, err := c.As(u).GetProfile(ctx, x, []string{"Gamertag"})
							mu.Lock()
							if err != nil {
								t.Errorf("window %v: %s's GetProfile(%s): %v", window, u, x, err)
							} else if pr.Settings["Gamertag"] != "for-"+u {
								t.Errorf("window %v: %s got the profile made %s", window, u, pr.Settings["Gamertag"])
							}
							mu.Unlock()
						}
					}()
				}
			}
			wg.Wait()
		}
		if st := tr.Stats(); st.Coalesced == 0 {
			t.Errorf("window %v: no call was coalesced or cached (%d requests): the attack did not reach the shared reads", window, served.Load())
		}
	}
}
