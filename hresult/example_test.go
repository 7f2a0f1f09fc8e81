package hresult_test

import (
	"context"
	"errors"
	"fmt"

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

func ExampleOf_wrapped() {
	err := fmt.Errorf("profile batch: %w", hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS)
	fmt.Println(errors.Is(err, hresult.HTTP_E_STATUS_429_TOO_MANY_REQUESTS))
	fmt.Println(hresult.Of(err))
	// Output:
	// true
	// 0x801901AD HTTP_E_STATUS_429_TOO_MANY_REQUESTS
}

func ExampleOf() {
	fmt.Println(hresult.Of(context.Canceled))
	fmt.Println(hresult.Of(nil).Succeeded())
	// Output:
	// 0x80004004 E_ABORT
	// true
}
