// Package clock is the seam through which fgrl's own tools run the transport in virtual time.
//
// The transport reads time through the Clock carried by a request's
// context, or the real clock when there is none. The context key is
// internal, so only this module (the xblcall simulator) can substitute a
// clock; users and tests rely on testing/synctest instead.
package clock

import (
	"context"
	"time"
)

// Clock is the time source of a call.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
	// AfterFunc calls f after d unless Stop is called first.
	AfterFunc(d time.Duration, f func()) Stopper
}

// Stopper cancels a pending AfterFunc; Stop reports whether it prevented the
// call. *time.Timer is one.
type Stopper interface {
	Stop() bool
}

type key struct{}

// With returns a context whose calls use c.
func With(ctx context.Context, c Clock) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From returns the context's clock, or Real.
func From(ctx context.Context) Clock {
	if c, ok := ctx.Value(key{}).(Clock); ok {
		return c
	}
	return Real{}
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Sleep waits with a timer, ending early when ctx is done.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AfterFunc is time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Stopper { return time.AfterFunc(d, f) }

// Waiter is a Clock on which a call must not block but through it: the
// simulator's virtual clock advances only while every call sleeps in it.
type Waiter interface {
	// Wait returns when done is closed, or ctx.Err() when ctx ends first.
	Wait(ctx context.Context, done <-chan struct{}) error
}

// Wait blocks until done is closed or ctx is done (returning ctx.Err()),
// through c when c is a Waiter.
func Wait(ctx context.Context, c Clock, done <-chan struct{}) error {
	if w, ok := c.(Waiter); ok {
		return w.Wait(ctx, done)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
