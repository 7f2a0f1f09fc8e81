// Package archtest holds the tests that keep the docs true to the code:
// docs/ARCHITECTURE.md's package table and import allow-list, the import
// graph of a program that uses the transport and the mock, and
// RELIABILITY.md's table of fuzz targets.
package archtest
