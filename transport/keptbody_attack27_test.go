package transport

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xblgo/fgrl/internal/clock"
)

type attack27CountClose struct {
	io.Reader
	closes int
}

func (c *attack27CountClose) Close() error { c.closes++; return nil }

// held: a 429 peeked (peek429) and then drained (drain) nests two kept
// bodies over the attempt's: attemptOf finds the attempt through both, the
// caller reads every byte once in order, Close reaches the base body once
// per Close and releases the attempt (its context ends); a body of another
// type (a Base's own wrapper) has no attempt.
func TestAttack27KeptBodyNested(t *testing.T) {
	tr := &Transport{}
	a := tr.newAttempt(context.Background(), clock.Real{}, time.Minute)
	base := &attack27CountClose{Reader: strings.NewReader(strings.Repeat("x", 70000) + "END")}
	a.body.ReadCloser = base
	resp := &http.Response{Body: &a.body}
	peek429(resp)
	drain(resp)
	if got := attemptOf(resp.Body); got != a {
		t.Fatalf("attemptOf through two kept bodies: %p, want %p", got, a)
	}
	if attemptOf(io.NopCloser(strings.NewReader(""))) != nil {
		t.Fatal("attemptOf of a foreign body is not nil")
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != 70003 || !strings.HasSuffix(string(b), "END") || strings.Count(string(b), "x") != 70000 {
		t.Fatalf("read %d bytes, err %v", len(b), err)
	}
	if a.ctx.Err() == nil {
		t.Error("attempt not released at the body's end")
	}
	resp.Body.Close()
	if base.closes != 1 {
		t.Errorf("base closed %d times, want 1", base.closes)
	}
}
