package mock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestHugeIDsRefused: a token minted for a 10 KB title (or xuid) is refused
// with 401: such ids would become FGRL keys whose size, times the key cap,
// no memory holds.
func TestHugeIDsRefused(t *testing.T) {
	h := NewHandler()
	for _, tok := range []string{Token(xuid1, strings.Repeat("9", 10<<10)), Token(strings.Repeat("9", 10<<10), title1)} {
		req := httptest.NewRequest("GET", "https://profile.xboxlive.com/users/me/profile/settings?settings=Gamertag", nil)
		req.Header.Set("Authorization", tok)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if keys := h.Overview(context.Background()).Keys; rec.Code != http.StatusUnauthorized || len(keys) != 0 {
			t.Errorf("status %d, %d keys", rec.Code, len(keys))
		}
	}
}

// TestTokenCacheAnswersAsParseToken: the cache of parsed tokens answers
// every text as parseToken does, the first time and every time after,
// however the texts share its sets: one set of two entries here, so every
// token meets the others' entries. A text differing from an accepted one
// by a byte, or naming another's userhash, is refused as before.
func TestTokenCacheAnswersAsParseToken(t *testing.T) {
	minted := Token(xuid1, title1)
	other := Token(xuid2, title1)
	tampered := []byte(minted)
	tampered[len(tampered)-20] ^= 1
	tests := []struct {
		name string
		auth string
		ok   bool
	}{
		{"minted", minted, true},
		{"another user", other, true},
		{"another title", Token(xuid1, "987654321"), true},
		{"a sign-in's serial", mintToken(xuid1, title1, "42"), true},
		{"padded with spaces", "  " + minted + " ", true},
		{"longer than an entry holds", minted + strings.Repeat(" ", maxCachedAuth), true},
		{"a byte changed", string(tampered), false},
		{"another's userhash", strings.Replace(minted, UserHash(xuid1), UserHash(xuid2), 1), false},
		{"cut short", minted[:len(minted)-1], false},
		{"no token", "", false},
	}
	tc := newTokenCache(1)
	for round := range 3 {
		for _, tt := range tests {
			want, wantErr := parseToken(tt.auth)
			got, err := tc.identity(tt.auth)
			if got != want || (err == nil) != (wantErr == nil) || (err == nil) != tt.ok {
				t.Errorf("round %d, %s: identity = %+v, %v; want %+v, %v", round, tt.name, got, err, want, wantErr)
			}
		}
	}
}

// TestTokenCacheBounded: the cache holds at most two entries a set, only
// of tokens accepted and of at most maxCachedAuth bytes, each a copy that
// keeps no part of the string the token came in (a header may be a slice
// of a request of any size).
func TestTokenCacheBounded(t *testing.T) {
	tc := newTokenCache(1)
	big := strings.Repeat("x", 1<<20) + Token(xuid1, title1)
	tc.identity(big[1<<20:])
	for _, e := range cached(tc) {
		for _, s := range []string{e.auth, e.id.userhash, e.id.xuid, e.id.title} {
			if within(s, big) {
				t.Errorf("entry %q holds part of the 1 MiB string its token came in", s)
			}
		}
	}
	tc.identity(Token(xuid2, title1) + strings.Repeat(" ", maxCachedAuth))
	for i := range 100 {
		tc.identity(Token(strconv.Itoa(2533274790000000+i), title1))
		tc.identity("XBL3.0 x=1;mock1." + strconv.Itoa(i))
	}
	entries := cached(tc)
	for _, e := range entries {
		if _, err := parseToken(e.auth); err != nil || len(e.auth) > maxCachedAuth {
			t.Errorf("entry of %d bytes for %q (parseToken: %v)", len(e.auth), e.auth, err)
		}
	}
	if len(entries) != 2 {
		t.Errorf("%d entries in one set, want 2", len(entries))
	}
}

// cached returns the entries of tc's sets.
func cached(tc *tokenCache) []*tokenEntry {
	var out []*tokenEntry
	for i := range tc.sets {
		for j := range tc.sets[i].entries {
			if e := tc.sets[i].entries[j].Load(); e != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// within reports whether s's bytes are part of big's.
func within(s, big string) bool {
	p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(big)))
	return len(s) > 0 && p >= b && p < b+uintptr(len(big))
}

// TestTokenCacheConcurrent: callers reading tokens that share one set at
// once each get their own token's identity (run with -race).
func TestTokenCacheConcurrent(t *testing.T) {
	tc := newTokenCache(1)
	tokens := make([]string, 8)
	for i := range tokens {
		tokens[i] = Token(strconv.Itoa(2533274790000000+i), title1)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				tok := tokens[(g+i)%len(tokens)]
				want, _ := parseToken(tok)
				if got, err := tc.identity(tok); got != want || err != nil {
					t.Errorf("identity = %+v, %v; want %+v", got, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkAuthenticate reads one of 1,000 users' tokens in turn, as under
// wrk (bench/wrk-tokens.lua): from the cache, and parsed each time.
func BenchmarkAuthenticate(b *testing.B) {
	tokens := make([]string, 1000)
	for i := range tokens {
		tokens[i] = Token(strconv.Itoa(2533274790000000+i), title1)
	}
	b.Run("cached", func(b *testing.B) {
		tc := newTokenCache(tokenCacheSets)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			tc.identity(tokens[i%len(tokens)])
			i++
		}
	})
	b.Run("parsed", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			parseToken(tokens[i%len(tokens)])
			i++
		}
	})
}
