package client

import (
	"context"
	"iter"
)

// Page is one page of a listing.
type Page[T any] struct {
	Items []T
	// ContinuationToken fetches the next page; "" on the last page.
	ContinuationToken string
}

// pages iterates over every item of a paged listing, fetching pages on
// demand. It stops after the first error, which it yields.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, token string) (Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		token := ""
		for {
			p, err := fetch(ctx, token)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
			if p.ContinuationToken == "" || p.ContinuationToken == token {
				return
			}
			token = p.ContinuationToken
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
