package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAttackBatchKeepsALeftCallersSettings: a profile batch is made with
// the closure of the lookup that opened it, settings slice and all, even
// after that lookup left (its context ended) and its caller, owning the
// slice again, reused it. Another lookup still waiting in the batch, which
// asked for Gamertag, is then sent, and answered, with the settings the
// first caller wrote later: its own request is not the one it made (and
// under -race the write and the batch's read are a data race).
func TestAttackBatchKeepsALeftCallersSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sent [][]string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			var in struct {
				UserIDs  []string `json:"userIds"`
				Settings []string `json:"settings"`
			}
			if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
				return nil, err
			}
			mu.Lock()
			sent = append(sent, in.Settings)
			mu.Unlock()
			var b strings.Builder
			b.WriteString(`{"profileUsers": [`)
			for i, id := range in.UserIDs {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`{"id": "` + id + `", "settings": [`)
				for j, s := range in.Settings {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(`{"id": "` + s + `", "value": "v"}`)
				}
				b.WriteString(`]}`)
			}
			b.WriteString(`]}`)
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r,
				Body: io.NopCloser(strings.NewReader(b.String()))}, nil
		})
		c, err := New(Config{TitleID: title, Tokens: mockTokens(), Transport: base, BatchWindow: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		u := c.As(me)
		settings := []string{"Gamertag"}
		ctx, cancel := context.WithCancel(context.Background())
		firstDone := make(chan error, 1)
		go func() {
			_, err := u.GetProfile(ctx, "2533274790000001", settings)
			firstDone <- err
		}()
		synctest.Wait() // the first lookup opened the batch
		var got Profile
		var gotErr error
		secondDone := make(chan struct{})
		go func() {
			got, gotErr = u.GetProfile(context.Background(), "2533274790000002", []string{"Gamertag"})
			close(secondDone)
		}()
		synctest.Wait() // the second joined it
		cancel()
		if err := <-firstDone; !errors.Is(err, context.Canceled) {
			t.Fatalf("the first lookup: %v, want context.Canceled", err)
		}
		settings[0] = "RealName" // the first caller's slice is its own again
		<-secondDone
		if gotErr != nil || got.Settings["Gamertag"] == "" {
			t.Errorf("the second lookup asked for Gamertag and got %+v, %v", got, gotErr)
		}
		if diff := cmp.Diff([][]string{{"Gamertag"}}, sent); diff != "" {
			t.Errorf("settings sent (-want +got):\n%s", diff)
		}
	})
}
