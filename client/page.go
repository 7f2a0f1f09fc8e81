package client

import (
	"context"
	"fmt"
	"hash/maphash"
	"iter"

	"github.com/xblgo/fgrl/hresult"
)

// Page is one page of a listing, the one shape of every paged call.
type Page[T any] struct {
	Items []T
	// TotalCount is the number of items in all pages, when the service
	// says (GetPeople, leaderboards); 0 otherwise. A negative one is the
	// call's error.
	TotalCount int
	// ContinuationToken fetches the next page; "" on the last page. Pass
	// it back as the call's continuationToken.
	ContinuationToken string
}

// maxEmptyPages bounds the pages in a row without an item that pages
// fetches: the caller, who gets no item meanwhile, cannot stop it.
const maxEmptyPages = 64

// pages iterates over every item of a paged listing, fetching pages on
// demand. It stops after the first error, which it yields. A listing
// whose continuation token comes back to one it already gave (A, B, A, or
// A again at once: the same page for ever), or that gives maxEmptyPages pages in a row without an item, ends with
// an error: the service would go round for ever, and a caller who gets
// no item cannot stop it.
func pages[T any](ctx context.Context, a api, fetch func(ctx context.Context, continuationToken string) (Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		seed := maphash.MakeSeed()
		seen := map[uint64]bool{} // the tokens given so far, by hash: one a page
		token, empty := "", 0
		for {
			p, err := fetch(ctx, token)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
			if p.ContinuationToken == "" {
				return
			}
			if empty = empty + 1; len(p.Items) > 0 {
				empty = 0
			}
			h := maphash.String(seed, p.ContinuationToken)
			switch {
			case seen[h]:
				yield(zero, &Error{code: hresult.E_UNEXPECTED, Service: a.service, API: a.name,
					Message: "the service's continuation token came back to one it gave before: the pages go round"})
				return
			case empty >= maxEmptyPages:
				yield(zero, &Error{code: hresult.E_UNEXPECTED, Service: a.service, API: a.name,
					Message: fmt.Sprintf("%d pages in a row without an item", maxEmptyPages)})
				return
			}
			seen[h] = true
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
