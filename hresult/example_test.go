package hresult_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xblgo/fgrl/hresult"
)

func ExampleFromStatus() {
	fmt.Println(hresult.FromStatus(429))
	fmt.Println(hresult.FromStatus(204))
	fmt.Println(hresult.FromStatus(418))
	// Output:
	// 0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS
	// 0x00000000 S_OK
	// 0x80190001 HTTP_E_STATUS_UNEXPECTED
}

func ExampleError() {
	err := fmt.Errorf("profile batch: %w", hresult.FromResponse(429, "throttled", 12*time.Second))
	fmt.Println(errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS))
	var e *hresult.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.RetryAfter)
	}
	// Output:
	// true
	// 429 12s
}

func ExampleOf() {
	fmt.Println(hresult.Of(context.Canceled))
	fmt.Println(hresult.Of(nil).Succeeded())
	// Output:
	// 0x80004004 E_ABORT
	// true
}
