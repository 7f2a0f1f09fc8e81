package client

import (
	"context"
	"iter"
)

// Page is one page of a listing, the one shape of every paged call.
type Page[T any] struct {
	Items []T
	// TotalCount is the number of items in all pages, when the service
	// says (GetPeople, leaderboards); 0 otherwise.
	TotalCount int
	// ContinuationToken fetches the next page; "" on the last page. Pass
	// it back as the call's continuationToken.
	ContinuationToken string
}

// pages iterates over every item of a paged listing, fetching pages on
// demand. It stops after the first error, which it yields.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, continuationToken string) (Page[T], error)) iter.Seq2[T, error] {
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
