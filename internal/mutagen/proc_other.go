//go:build !unix

package main

import "os/exec"

// ownGroup does nothing where process groups are not Unix's: only the test
// binary itself is killed at its timeout.
func ownGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}
