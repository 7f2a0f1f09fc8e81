package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/xblgo/fgrl/mock"
)

// sigRecorder is a base that records each attempt's Signature and
// Authorization, and a Signer whose signature names the instant, the
// Authorization and the body it signed, as a real one covers them
// (internal/xblsign).
type sigRecorder struct {
	script
	mu   sync.Mutex
	seen []string // "signature | authorization" per attempt
}

func (s *sigRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.seen = append(s.seen, req.Header.Get("Signature")+" | "+req.Header.Get("Authorization"))
	s.mu.Unlock()
	return s.script.RoundTrip(req)
}

func fakeSign(req *http.Request) error {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	req.Header.Set("Signature", time.Now().UTC().Format("15:04:05")+" "+req.Header.Get("Authorization")[:12]+" "+string(body))
	return nil
}

func TestSignerSignsEveryAttempt(t *testing.T) {
	tok1, tok2 := mock.Token(xuid1, title), mock.Token(xuid1, "99")
	cases := []struct {
		name    string
		answers []func(http.ResponseWriter)
		want    []string
	}{
		{"a retry after a 503 is signed at its own instant", []func(http.ResponseWriter){answer(503, "3")},
			[]string{"00:00:00 " + tok1[:12] + " b | " + tok1, "00:00:03 " + tok1[:12] + " b | " + tok1}},
		{"the retry after a refresh signs the new Authorization", []func(http.ResponseWriter){answer(401, "")},
			[]string{"00:00:00 " + tok1[:12] + " b | " + tok1, "00:00:00 " + tok2[:12] + " b | " + tok2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &sigRecorder{script: script{answers: tc.answers}}
				tr := &Transport{Base: s, DisableBudget: true,
					RefreshToken: func(*http.Request) (string, error) { return tok2, nil }}
				ctx := WithSigner(context.Background(), fakeSign)
				req, _ := http.NewRequestWithContext(ctx, "POST", profileURL, strings.NewReader("b"))
				req.Header.Set("Authorization", tok1)
				req.Header.Set("Signature", "stale")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if diff := cmp.Diff(tc.want, s.seen); diff != "" {
					t.Errorf("signatures sent (-want +got):\n%s", diff)
				}
				if got := req.Header.Get("Signature"); got != "stale" {
					t.Errorf("caller's request Signature = %q, want it untouched", got)
				}
			})
		})
	}
}

func TestSignerErrorSendsNothing(t *testing.T) {
	s := &script{}
	tr := &Transport{Base: s, DisableBudget: true}
	boom := errors.New("no key")
	signs := 0
	ctx := WithSigner(context.Background(), func(*http.Request) error { signs++; return boom })
	if _, err := get(t, tr, ctx, profileURL, xuid1); !errors.Is(err, boom) || s.calls() != 0 {
		t.Errorf("got %v after %d attempts, want %v and none sent", err, s.calls(), boom)
	}
	if signs != 1 { // a failure of the caller's own, before anything was sent: no retry mends it
		t.Errorf("the signer was asked %d times, want 1", signs)
	}
}

// TestGetBodyErrorNotRetried: a retry whose body cannot be had again
// (GetBody fails) is the caller's failure, not the network's: the call
// ends with GetBody's error after the one attempt sent, instead of asking
// for the body again for the whole retry window.
func TestGetBodyErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{answers: []func(http.ResponseWriter){answer(503, "")}}
		tr := &Transport{Base: s, DisableBudget: true}
		gone := errors.New("body gone")
		asked := 0
		req, err := http.NewRequest("POST", profileURL, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.GetBody = func() (io.ReadCloser, error) { asked++; return nil, gone }
		req.Header.Set("Authorization", mock.Token(xuid1, title))
		if _, err := tr.RoundTrip(req); !errors.Is(err, gone) || s.calls() != 1 || asked != 1 {
			t.Errorf("got %v after %d attempts sent and GetBody asked %d times, want %v, 1 and 1", err, s.calls(), asked, gone)
		}
	})
}

func TestSignerNotCalledAfterCrossHostRedirect(t *testing.T) {
	s := &sigRecorder{}
	tr := &Transport{Base: s, DisableBudget: true}
	ctx := WithSigner(context.Background(), fakeSign)
	from, _ := http.NewRequest("GET", profileURL, nil)
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://elsewhere.example/x", nil)
	req.Header.Set("Authorization", mock.Token(xuid1, title))
	req.Response = &http.Response{Request: from}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if diff := cmp.Diff([]string{" | "}, s.seen); diff != "" {
		t.Errorf("redirected request's credentials (-want +got):\n%s", diff)
	}
}
