package ratelimit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseBody(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Body
	}{
		{"spec", `{"version":1,"currentRequests":13,"maxRequests":10,"periodInSeconds":15,"limitType":"Rate"}`,
			Body{1, 13, 10, 15, "Rate", "", ""}},
		{"strings", `{"version":"1","currentRequests":"13","maxRequests":" 10 ","periodInSeconds":"300","limitType":"rate","debugMessage":"d"}`,
			Body{1, 13, 10, 300, "rate", "d", ""}},
		{"unknown keys and nulls", `{"version":1,"extra":{"a":[1]},"maxRequests":null,"limitType":"Concurrency"}`,
			Body{Version: 1, LimitType: "Concurrency"}},
		{"store", "The rate limit of 100 operations in 300 seconds has been exceeded for aspect {userId;titleId}.",
			Body{MaxRequests: 100, PeriodInSeconds: 300, LimitType: "Rate",
				DebugMessage: "The rate limit of 100 operations in 300 seconds has been exceeded for aspect {userId;titleId}.",
				Aspect:       "{userId;titleId}"}},
		{"zeros", `{"version":1,"currentRequests":0,"maxRequests":"0","periodInSeconds":0}`, Body{Version: 1}},
		{"store, zeros", "The rate limit of 0 operations in 0 seconds has been exceeded for aspect a.",
			Body{LimitType: "Rate", DebugMessage: "The rate limit of 0 operations in 0 seconds has been exceeded for aspect a.", Aspect: "a"}},
		{"exactly MaxBodySize bytes", `{"maxRequests":10}` + strings.Repeat(" ", MaxBodySize-len(`{"maxRequests":10}`)), Body{MaxRequests: 10}},
	}
	for _, tt := range tests {
		got, err := ParseBody([]byte(tt.in))
		if err != nil {
			t.Errorf("%s: ParseBody: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ParseBody mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestParseBodyErrors(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"maxRequests": -1}`, `{"maxRequests": "ten"}`, `{"maxRequests": 1.5}`,
		`{"maxRequests": 99999999999999999999}`, `[]`, `hello`,
		"The rate limit of x operations in 300 seconds has been exceeded for aspect a.",
		"The rate limit of -1 operations in 300 seconds has been exceeded for aspect a.",
		"The rate limit of 1 operations in -300 seconds has been exceeded for aspect a.",
		`{"a":"` + strings.Repeat("x", MaxBodySize) + `"}`,
		`{"maxRequests":10}` + strings.Repeat(" ", MaxBodySize+1-len(`{"maxRequests":10}`)), // a byte over
		`{"maxRequests":"-1"}`, `{"maxRequests":""}`,
	} {
		if _, err := ParseBody([]byte(in)); !errors.Is(err, ErrBody) {
			t.Errorf("ParseBody(%.40q) = %v, want ErrBody", in, err)
		}
	}
}

func TestStoreTextRoundTrip(t *testing.T) {
	txt := StoreText(200, 300, "{userId;publisherId}")
	b, err := ParseBody([]byte(txt))
	if err != nil || b.MaxRequests != 200 || b.PeriodInSeconds != 300 || b.Aspect != "{userId;publisherId}" {
		t.Errorf("ParseBody(StoreText) = %+v, %v", b, err)
	}
}

func ExampleParseBody() {
	b, _ := ParseBody([]byte(`{"version":"1","currentRequests":"13","maxRequests":10,"periodInSeconds":15,"limitType":"rate"}`))
	fmt.Println(b.CurrentRequests, b.MaxRequests, b.PeriodInSeconds)
	// Output: 13 10 15
}
