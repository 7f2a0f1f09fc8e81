// Package archtest holds a test that keeps the module's package graph as
// docs/ARCHITECTURE.md draws it.
package archtest
