// Package interop drives published clients of the Xbox services, written
// in Go, against the mock through their own public methods, over HTTPS at
// the services' real names. It is a module of its own so that the SDK's
// go.mod never lists them: github.com/df-mc/go-xsapi/v2 (goxsapi_test.go).
package interop
