// Package archtest holds the tests that keep the docs and CI true to the
// code: docs/ARCHITECTURE.md's package table and import allow-list, the
// import graph of a program that uses the transport and the mock,
// RELIABILITY.md's table of fuzz targets, and .ci/run's list of the tests
// that run without the race detector too (and attacks on .ci/run's own
// verdicts, run as fragments of the script on throwaway modules).
package archtest
