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

// TestBatchSendsWhatItsKeyNames: a profile batch is sent with the settings
// its key names, in a list of its own, not the settings slice of the
// lookup that opened it: once that lookup left (its context ended), its
// caller owns the slice again and may reuse it, and another lookup still
// waiting in the batch, which asked for Gamertag, is sent and answered
// with Gamertag (under -race, the caller's write and the batch's read
// would otherwise race).
func TestBatchSendsWhatItsKeyNames(t *testing.T) {
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

// TestKindSettings: a profile batch's kind names its settings back, any
// names whatever they hold (':' and digits included), as a list of its own.
func TestKindSettings(t *testing.T) {
	for _, settings := range [][]string{
		{},
		{"Gamertag"},
		{"Gamertag", "GameDisplayPicRaw", "Gamerscore"},
		{"1:x", ":", "", "12:ab", "Gamertag\x00Gamerscore"},
	} {
		got := kindSettings(settingsKind(settings))
		if diff := cmp.Diff(settings, got); diff != "" {
			t.Errorf("kindSettings(settingsKind(%q)) mismatch (-want +got):\n%s", settings, diff)
		}
	}
}
